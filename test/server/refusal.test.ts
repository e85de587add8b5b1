/**
 * The answer a refused connection gets (api/server/refusal.ts), on real sockets: a 429 Node's own HTTP client
 * parses, in the service's envelope, with the headers a client needs to honour it; the connection ends with a
 * FIN after the answer, never a reset, even when the client sent more than was read; a client that neither
 * reads nor closes is let go at the bound.
 */
import { request } from "node:http";
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { answerAndClose, REFUSALS, refusalAnswer, refusalEnvelope } from "../../api/server/refusal";

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

/** A server that refuses every connection with `reason`'s answer; `closed` lists how long each socket lived. */
async function refusing(reason: keyof typeof REFUSALS, lingerMs?: number) {
  const answer = refusalAnswer(reason);
  const closed: number[] = [];
  server = createServer({ allowHalfOpen: true }, (socket) => {
    const t0 = performance.now();
    answerAndClose(socket, answer, () => closed.push(performance.now() - t0), lingerMs);
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return { port, closed };
}

describe("refusalAnswer", () => {
  it.each(Object.keys(REFUSALS) as (keyof typeof REFUSALS)[])(
    "%s: a 429 in the envelope, as Node's client reads it",
    async (reason) => {
      const { port } = await refusing(reason);
      const answer = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
        (resolve, reject) => {
          const req = request({ port, host: "127.0.0.1", path: "/health", agent: false }, (res) => {
            let body = "";
            res.setEncoding("utf8");
            res.on("data", (c: string) => {
              body += c;
            });
            res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
          });
          req.on("error", reject);
          req.end();
        },
      );
      expect(answer.status).toBe(429);
      expect(answer.headers).toMatchObject({
        "content-type": "application/json; charset=UTF-8",
        "access-control-allow-origin": "*",
        "cache-control": "no-store",
        "retry-after": String(REFUSALS[reason].retryAfterSec),
        connection: "close",
      });
      expect(JSON.parse(answer.body)).toEqual({
        ok: false,
        error: "RATE_LIMITED",
        message: REFUSALS[reason].message,
        retryAfterSec: REFUSALS[reason].retryAfterSec,
      });
      expect(refusalEnvelope("per_ip").message).toBe("too many open connections from your address");
    },
  );
});

describe("answerAndClose", () => {
  it("a client that sent 1 MiB before reading gets the whole answer and a FIN, not a reset", async () => {
    const { port, closed } = await refusing("per_ip");
    const expected = refusalAnswer("per_ip").toString();
    const seen = await new Promise<{ data: string; error?: string }>((resolve) => {
      let data = "";
      const socket: Socket = connect({ port, host: "127.0.0.1" }, () => {
        socket.write(Buffer.alloc(1024 * 1024, "a"));
        setTimeout(() => socket.on("data", (c) => (data += c)), 200);
      });
      socket.on("end", () => resolve({ data }));
      socket.on("error", (e: NodeJS.ErrnoException) => resolve({ data, error: e.code }));
    });
    expect(seen).toEqual({ data: expected });
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toHaveLength(1);
  });

  it("a client that neither reads nor closes is let go at the bound", async () => {
    const { port, closed } = await refusing("total", 300);
    const socket = connect({ port, host: "127.0.0.1" });
    socket.pause();
    socket.on("error", () => {});
    await new Promise((r) => setTimeout(r, 150));
    expect(closed).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 400));
    expect(closed).toHaveLength(1);
    expect(closed[0]).toBeGreaterThanOrEqual(290);
    socket.destroy();
  });
});
