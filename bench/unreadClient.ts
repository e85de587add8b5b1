/**
 * A client that sends and never reads, for the load benches (every load test runs one beside its load): one socket
 * per path, each with `pipelined` requests for it written at once, paused, so the server's answers pile up in its
 * own buffers. `close()` ends them.
 */
import { connect, type Socket } from "node:net";

export function neverReading(port: number, paths: readonly string[], pipelined = 20): { close(): void } {
  const sockets: Socket[] = paths.map((path) => {
    const s = connect({ host: "127.0.0.1", port });
    s.pause();
    s.on("error", () => {});
    s.write(`GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`.repeat(pipelined));
    return s;
  });
  return {
    close: () => {
      for (const s of sockets) s.destroy();
    },
  };
}
