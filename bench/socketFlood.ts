/**
 * The socket loop of the floods that count answers without reading them (bench/documentFlood.ts,
 * bench/distributedFlood.ts): ADDRESSES clients (127.0.1.1, 127.0.1.2, … — loopback addresses are all local on
 * Linux, and the API sees each as a client of its own), each on one keep-alive connection of its own, sending a
 * request, reading its whole answer (status and Content-Length from the head; the body only skipped), the next, for
 * `durationMs`; a new connection whenever the server closes one. Raw sockets, so the flood spends its CPU on sending,
 * not on reading.
 */
import { connect } from "node:net";

export const floodAddress = (i: number) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;

export type SocketFloodOptions = {
  base: URL;
  addresses: number;
  durationMs: number;
  /** The next request's bytes, head and body. */
  request: () => string | Buffer;
};

/** Runs the flood to its end: how many answers, by status (`error` for a connection's error). */
export async function socketFlood(
  o: SocketFloodOptions,
): Promise<{ requests: number; byStatus: Record<string, number> }> {
  const byStatus: Record<string, number> = {};
  let requests = 0;
  const until = performance.now() + o.durationMs;

  /** One connection: a request, its whole answer read, the next. */
  const connection = (localAddress: string): Promise<void> =>
    new Promise((resolve) => {
      const s = connect({ host: o.base.hostname, port: Number(o.base.port), localAddress }, () => s.write(o.request()));
      let head = "";
      let remaining = -1;
      let status = "";
      const answered = () => {
        byStatus[status] = (byStatus[status] ?? 0) + 1;
        requests++;
        head = "";
        remaining = -1;
        if (performance.now() < until) s.write(o.request());
        else s.end();
      };
      s.on("data", (chunk: Buffer) => {
        let rest = chunk;
        while (rest.length > 0) {
          if (remaining < 0) {
            head += rest.toString("latin1");
            const end = head.indexOf("\r\n\r\n");
            if (end < 0) return;
            status = head.slice(9, 12);
            remaining = Number(/content-length: (\d+)/i.exec(head.slice(0, end))?.[1] ?? 0);
            rest = Buffer.from(head.slice(end + 4), "latin1");
            head = "";
          }
          const take = Math.min(remaining, rest.length);
          remaining -= take;
          rest = rest.subarray(take);
          if (remaining === 0) answered();
        }
      });
      s.on("error", () => {
        byStatus.error = (byStatus.error ?? 0) + 1;
      });
      s.on("close", () => resolve());
    });

  /** One client: a new connection whenever the server closes one, until the time is up. */
  const client = async (localAddress: string) => {
    while (performance.now() < until) await connection(localAddress);
  };

  await Promise.all(Array.from({ length: o.addresses }, (_, i) => client(floodAddress(i))));
  return { requests, byStatus };
}
