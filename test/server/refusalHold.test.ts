/**
 * The hold of a connection refused twice in a row (api/server/refusalHold.ts), on a real HTTP server and keep-alive
 * connections: a request that comes back at once waits the refusal's Retry-After (however the answer set it; up to
 * half as long again; capped); a client that honours Retry-After or gets a good answer in between is never held,
 * and a request whose client left while held is never served.
 */
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Counter } from "../../api/observability/counter";
import { HOLD_MAX_MS, holdRefused } from "../../api/server/refusalHold";

/** /refuse?after=N answers 503 with Retry-After N (by writeHead alone with `head`, else setHeader); else 200. */
const answer = (served: string[]): RequestListener => {
  return (req: IncomingMessage, res: ServerResponse) => {
    served.push(req.url!);
    const url = new URL(req.url!, "http://x");
    if (url.pathname === "/refuse") {
      const after = url.searchParams.get("after");
      const status = url.searchParams.get("status") === "429" ? 429 : 503;
      if (url.searchParams.has("head")) res.writeHead(status, after === null ? {} : { "retry-after": after });
      else {
        if (after !== null) res.setHeader("retry-after", after);
        res.statusCode = status;
      }
      res.end("no");
    } else res.end("ok");
  };
};

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function start() {
  const served: string[] = [];
  const held = new Counter("held", "held", []);
  const server = createServer(holdRefused(answer(served), held));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push({ close: () => server.close() });
  servers.push({ close: () => server.closeAllConnections() });
  const { port } = server.address() as AddressInfo;
  return { port, served, held: () => Number(/ (\d+)$/m.exec(held.render())?.[1] ?? 0) };
}

/** One keep-alive connection; `get` sends a request and resolves with its status and ms when the answer is in. */
async function connection(port: number) {
  const socket: Socket = connect({ port, host: "127.0.0.1" });
  await new Promise((resolve) => socket.once("connect", resolve));
  servers.push({ close: () => socket.destroy() });
  let buffer = "";
  let waiting: ((status: number) => void) | undefined;
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => {
    buffer += chunk;
    const end = buffer.indexOf("\r\n\r\n");
    if (end < 0) return;
    const length = Number(/content-length: *(\d+)/i.exec(buffer.slice(0, end))?.[1] ?? 0);
    if (buffer.length < end + 4 + length) return;
    const status = Number(buffer.slice(9, 12));
    buffer = buffer.slice(end + 4 + length);
    waiting?.(status);
  });
  return {
    socket,
    get: (path: string) =>
      new Promise<{ status: number; ms: number }>((resolve) => {
        const started = performance.now();
        waiting = (status) => resolve({ status, ms: performance.now() - started });
        socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`);
      }),
  };
}

describe("holdRefused", () => {
  it("holds the next request of a connection refused twice in a row for the Retry-After, and only then", async () => {
    const { port, held } = await start();
    const c = await connection(port);
    expect((await c.get("/refuse?after=1")).ms).toBeLessThan(300);
    expect((await c.get("/refuse?after=1")).ms).toBeLessThan(300);
    const third = await c.get("/ok");
    expect(third.status).toBe(200);
    expect(third.ms).toBeGreaterThanOrEqual(950);
    expect(third.ms).toBeLessThan(1_500 + 300); // up to half the Retry-After again, at random
    expect(held()).toBe(1);
    // The good answer cleared the count: one refusal more is not enough to hold.
    await c.get("/refuse?after=1");
    expect((await c.get("/ok")).ms).toBeLessThan(300);
    // Another connection was never refused: never held.
    const other = await connection(port);
    expect((await other.get("/ok")).ms).toBeLessThan(300);
    expect(held()).toBe(1);
  });

  it("never holds a client that waits the Retry-After it was told", async () => {
    const { port, held } = await start();
    const c = await connection(port);
    for (let i = 0; i < 3; i++) {
      const { status, ms } = await c.get("/refuse?after=1");
      expect(status).toBe(503);
      expect(ms).toBeLessThan(300);
      await new Promise((r) => setTimeout(r, 1_050));
    }
    expect(held()).toBe(0);
  });

  it("reads Retry-After from a header block written by writeHead alone, and 429s count as refusals", async () => {
    const { port } = await start();
    const c = await connection(port);
    await c.get("/refuse?after=2&head&status=429");
    await c.get("/refuse?after=2&head&status=429");
    const held = await c.get("/ok");
    expect(held.ms).toBeGreaterThanOrEqual(1_950);
    expect(held.ms).toBeLessThan(3_000 + 300);
  });

  it("never holds after a 503 without Retry-After (a state, such as /ready's, not a refusal)", async () => {
    const { port, held } = await start();
    const c = await connection(port);
    for (let i = 0; i < 4; i++) expect(await c.get("/refuse")).toMatchObject({ status: 503 });
    expect((await c.get("/ok")).ms).toBeLessThan(300);
    expect(held()).toBe(0);
  });

  it(`holds at most ${HOLD_MAX_MS / 1000} s, whatever Retry-After says`, async () => {
    const { port } = await start();
    const c = await connection(port);
    await c.get("/refuse?after=60");
    await c.get("/refuse?after=60");
    const held = await c.get("/ok");
    expect(held.ms).toBeGreaterThanOrEqual(HOLD_MAX_MS - 50);
    expect(held.ms).toBeLessThan(HOLD_MAX_MS + 600);
  }, 10_000);

  it("survives an answer that cut its request's body short (by 'finish' the request has no socket)", async () => {
    // As api/http/boundedBody.ts does past its limit: leaving `for await` over the body destroys the request, and
    // Node then nulls `req.socket` before the answer's 'finish' (this crashed the API process on a 413).
    const server = createServer(
      holdRefused(async (req, res) => {
        let bytes = 0;
        for await (const chunk of req) {
          bytes += (chunk as Buffer).length;
          if (bytes > 32 * 1024) break;
        }
        res.writeHead(413, { connection: "close" });
        res.end("too large");
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push({ close: () => server.close() });
    servers.push({ close: () => server.closeAllConnections() });
    const { port } = server.address() as AddressInfo;
    const answer = await new Promise<string>((resolve) => {
      const s = connect({ port, host: "127.0.0.1" }, () => {
        s.write("POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n");
        for (let i = 0; i < 5; i++) s.write(`4000\r\n${"x".repeat(0x4000)}\r\n`);
      });
      let got = "";
      s.on("data", (d) => {
        got += d;
      });
      s.on("error", () => {});
      s.on("close", () => resolve(got));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    await new Promise((r) => setTimeout(r, 50));
    // Still serving.
    const c = await connection(port);
    expect((await c.get("/")).status).toBe(413);
  });

  it("does not serve a held request whose client left", async () => {
    const { port, served, held } = await start();
    const c = await connection(port);
    await c.get("/refuse?after=1");
    await c.get("/refuse?after=1");
    c.socket.write("GET /left HTTP/1.1\r\nhost: x\r\n\r\n");
    await new Promise((r) => setTimeout(r, 200));
    expect(held()).toBe(1);
    c.socket.destroy();
    await new Promise((r) => setTimeout(r, 1_100));
    expect(served).not.toContain("/left");
  });
});
