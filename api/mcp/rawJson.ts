/**
 * What JSON.parse cannot tell about a body it accepted, read from the text itself: how deep each message nests, which
 * objects repeat a member name (JSON.parse keeps the last one silently), and which tool arguments were written as
 * numbers that are not plain integers (`1.0000000000000000001`, `5e3`, `-0`: JSON.parse hands back a double that
 * already rounded them). A tool call's arguments become calldata, so each of these must be refused, never guessed
 * (api/mcp/gatekeeper.ts acts on what this finds). The text has already parsed as JSON, so the scan is one pass over it
 * without validating: a few microseconds for a message, ~0.2 ms at the 64 KiB body limit.
 */

/** A member's path from the body's root: object member names and array indexes. */
export type JsonPath = readonly (string | number)[];

export type RawFinding =
  /** `path` is the object's; `name` the member it holds more than once. */
  | { kind: "duplicate"; path: JsonPath; name: string }
  /** `path` is the number's; `source` its text. */
  | { kind: "inexact"; path: JsonPath; source: string };

export type RawScan = {
  /** The deepest nesting of objects and arrays under each top-level element (a batch's messages; else [0] the body). */
  depths: number[];
  findings: RawFinding[];
};

/** A JSON number that is exactly the integer it parses to: no fraction, no exponent, no `-0`. */
const PLAIN_INTEGER = /^(0|-?[1-9][0-9]*)$/;

type Frame = {
  /** The member names seen so far (an object), or null (an array). */
  names: Set<string> | null;
  /** The member name or index of the value being read in this container. */
  key: string | number;
};

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Scans a text JSON.parse accepted. `numbersAt(path)` says whether a number at that path should be checked (only tool
 * arguments are: an id of `1.0` is not a defect worth a refusal).
 */
export function scanJson(text: string, numbersAt: (path: JsonPath) => boolean): RawScan {
  const stack: Frame[] = [];
  const findings: RawFinding[] = [];
  const depths: number[] = [];
  let expectName = false;
  let batch = false;
  const top = () => stack[stack.length - 1];
  const pathOf = (frames: number) => stack.slice(0, frames).map((f) => f.key);
  const noteDepth = () => {
    // Depth under a top-level element: a batch's own array does not count.
    const element = batch ? (stack[0]!.key as number) : 0;
    const depth = batch ? stack.length - 1 : stack.length;
    if ((depths[element] ?? 0) < depth) depths[element] = depth;
  };
  let i = 0;
  const n = text.length;
  while (i < n) {
    const ch = text.charCodeAt(i);
    if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      if (stack.length === 0 && ch === 0x5b) batch = true;
      stack.push({ names: ch === 0x7b ? new Set() : null, key: 0 });
      expectName = ch === 0x7b;
      noteDepth();
      i++;
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) {
      stack.pop();
      expectName = false;
      i++;
    } else if (ch === 0x2c /* , */) {
      const frame = top()!;
      if (frame.names === null) frame.key = (frame.key as number) + 1;
      else expectName = true;
      i++;
    } else if (ch === 0x3a /* : */) {
      expectName = false;
      i++;
    } else if (ch === QUOTE) {
      let end = text.indexOf('"', i + 1);
      // A quote preceded by an odd number of backslashes is escaped.
      for (;;) {
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (expectName) {
        const raw = text.slice(i, end + 1);
        const name = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        const frame = top()!;
        if (frame.names!.has(name)) findings.push({ kind: "duplicate", path: pathOf(stack.length - 1), name });
        frame.names!.add(name);
        frame.key = name;
      }
      i = end + 1;
    } else if (ch === 0x2d /* - */ || (ch >= 0x30 && ch <= 0x39)) {
      let end = i + 1;
      for (; end < n; end++) {
        const c = text.charCodeAt(end);
        if (!((c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d)) break;
      }
      const source = text.slice(i, end);
      if (!PLAIN_INTEGER.test(source)) {
        const path = pathOf(stack.length);
        if (numbersAt(path)) findings.push({ kind: "inexact", path, source });
      }
      i = end;
    } else i++;
  }
  if (depths.length === 0) depths.push(0);
  return { depths, findings };
}
