/**
 * Clients that ask for large pages and never read them: from each of `addresses` loopback addresses (127.0.1.1,
 * 127.0.1.2, … — all local on Linux), `sockets` connections each sending `pipelined` requests at once and reading
 * nothing, held for `holdMs`, then closed. And what another client sees meanwhile: `probe` times sequential GETs on
 * one keep-alive connection, `freshConnection` one GET on a connection of its own. Used by
 * test/index/unreadPages.test.ts and bench/abuse-choices.ts.
 */
import { request } from "node:http";
import { connect, type Socket } from "node:net";

export type UnreadOptions = {
  addresses: number;
  sockets: number;
  pipelined: number;
  holdMs: number;
  /** The raw HTTP/1.1 request (head and body) the `k`-th request of connection `i` sends. */
  request: (i: number, k: number) => string;
};

export const floodAddress = (i: number) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;

/** Opens every connection, sends its requests, holds them unread for `holdMs`; resolves once all are closed. */
export async function holdUnread(base: string, o: UnreadOptions): Promise<{ connected: number }> {
  const url = new URL(base);
  const sockets: Socket[] = [];
  let connected = 0;
  for (let a = 0; a < o.addresses; a++) {
    for (let s = 0; s < o.sockets; s++) {
      const i = a * o.sockets + s;
      const socket = connect({ host: url.hostname, port: Number(url.port), localAddress: floodAddress(a) }, () => {
        connected++;
        socket.write(Array.from({ length: o.pipelined }, (_, k) => o.request(i, k)).join(""));
        socket.pause(); // never read: the server's answers stay in the kernel's buffers, then in its own
      });
      socket.on("error", () => {});
      sockets.push(socket);
    }
    if (a % 50 === 49) await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, o.holdMs));
  for (const s of sockets) s.destroy();
  return { connected };
}

/** A GET request's raw bytes. */
export const rawGet = (host: string, path: string) => `GET ${path} HTTP/1.1\r\nhost: ${host}\r\n\r\n`;

/** A GraphQL POST's raw bytes. */
export function rawGraphql(host: string, query: string): string {
  const body = JSON.stringify({ query });
  return (
    `POST /graphql HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** Sequential GETs of `url` from `localAddress` on one keep-alive connection for `ms`: each one's time. */
export async function probe(
  url: string,
  ms: number,
  localAddress = "127.0.0.9",
): Promise<{ ms: number[]; failed: number }> {
  const out: number[] = [];
  let failed = 0;
  const { Agent } = await import("node:http");
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const t = performance.now();
    const status = await get(url, { agent, localAddress });
    if (status !== 200) failed++;
    out.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 10));
  }
  agent.destroy();
  return { ms: out, failed };
}

/** One GET of `url` on a new connection from `localAddress`: its status (0 when none within 3 s) and time. */
export async function freshConnection(url: string, localAddress: string): Promise<{ status: number; ms: number }> {
  const t = performance.now();
  const status = await get(url, { agent: false, localAddress });
  return { status, ms: performance.now() - t };
}

/** One GET of `url` from `localAddress`, its answer read whole: its status (0 on a failure or after 3 s). */
export function get(
  url: string,
  o: { agent: import("node:http").Agent | false; localAddress: string },
): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { ...o, timeout: 3_000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", () => resolve(0));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", () => resolve(0));
    req.end();
  });
}

export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
