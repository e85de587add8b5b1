/**
 * A connection flood from one address (LOCAL_ADDRESS) against 127.0.0.1:PORT, for DURATION_MS: CONCURRENCY loops,
 * each opening a connection, sending `GET /health` and reading until the server closes, then again at once. With
 * LINGER=1 a connection never closes its side (the server must let it go). Prints one JSON line: connections made
 * and how each ended — by status line (`200`, `429`), `reset` (ECONNRESET), `closed` (closed with no answer),
 * other errors by code.
 */
import { connect } from "node:net";

const port = Number(process.env.PORT);
const from = process.env.LOCAL_ADDRESS ?? "127.0.0.1";
const until = performance.now() + Number(process.env.DURATION_MS ?? 5_000);
const concurrency = Number(process.env.CONCURRENCY ?? 64);
const linger = process.env.LINGER === "1";
const outcomes: Record<string, number> = {};
let connections = 0;

const once = () =>
  new Promise<void>((resolve) => {
    connections++;
    let answer = "";
    let done = false;
    const end = (kind: string) => {
      if (done) return;
      done = true;
      outcomes[kind] = (outcomes[kind] ?? 0) + 1;
      if (linger) setTimeout(() => s.destroy(), 3_000);
      else s.destroy();
      resolve();
    };
    const s = connect({ host: "127.0.0.1", port, localAddress: from, allowHalfOpen: linger }, () =>
      s.write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    );
    s.on("data", (c) => {
      answer += c;
    });
    s.on("end", () => end(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? "closed"));
    s.on("close", () => end(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? "closed"));
    s.on("error", (e: NodeJS.ErrnoException) => end(e.code === "ECONNRESET" ? "reset" : (e.code ?? "error")));
  });

await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) await once();
  }),
);
process.stdout.write(`${JSON.stringify({ connections, outcomes })}\n`);
process.exit(0);
