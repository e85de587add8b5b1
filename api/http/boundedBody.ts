/**
 * Reading a request body no further than a route's limit (the MCP endpoint, POST /graphql), and its bytes as UTF-8 or
 * nothing. A body its client abandoned (hung up before its end) is BodyAbandonedError.
 */
import type { AppContext } from "./env";
import { BodyAbandonedError } from "./errors";

/**
 * The request's body (its bytes), or null when it is larger than `max` bytes (read no further than that). Served by
 * @hono/node-server, the body is read from Node's IncomingMessage itself: building the web Request's
 * ReadableStream over it costs more than the rest of a small request's parsing. In process (app.request), from
 * the Request. Decode it with utf8Text: decoded leniently, bytes that are not UTF-8 would become U+FFFD.
 */
export async function readBoundedBody(c: AppContext, max: number): Promise<Buffer | null> {
  const incoming = c.env?.incoming;
  if (incoming === undefined || incoming.readableDidRead) return readBoundedBytes(c.req.raw, max);
  const declared = Number(incoming.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of incoming as AsyncIterable<Buffer>) {
      size += chunk.byteLength;
      // Leaving the loop destroys the stream: nothing more of it is read.
      if (size > max) return null;
      chunks.push(chunk);
    }
  } catch (error) {
    // The stream fails only when its connection does: the client hung up mid-body ("aborted").
    throw new BodyAbandonedError({ cause: error });
  }
  return Buffer.concat(chunks, size);
}

/**
 * UTF-8 as JSON between systems must be (RFC 8259 §8.1), refusing what is not. A BOM is kept, so a body that starts
 * with one still fails JSON.parse as before.
 */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A body's bytes as text, or null when they are not UTF-8. Decoded leniently (Buffer#toString), an invalid byte became
 * U+FFFD and the request went on as something its client never sent: an MCP answer under an id it never used, a
 * GraphQL document it never wrote.
 */
export function utf8Text(bytes: Uint8Array): string | null {
  try {
    return UTF8.decode(bytes);
  } catch {
    return null;
  }
}

/** The body's bytes, or null when it is larger than `max` bytes (read no further than that). */
export async function readBoundedBytes(request: Request, max: number): Promise<Buffer | null> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > max) return null;
  if (request.body === null) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await reader.read();
    } catch (error) {
      // The body's stream fails only when its connection does: the client hung up mid-body.
      throw new BodyAbandonedError({ cause: error });
    }
    const { done, value } = next;
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
