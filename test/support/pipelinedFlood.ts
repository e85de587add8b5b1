/**
 * Never-reading pipelining clients, as a process of their own (so their CPU is not the measured client's): CLIENTS
 * clients each connect to PORT on 127.0.0.1, write PIPELINED × `GET /api/supply/total` at once and never read; when
 * a client's connection is closed (the one request it writes every 50 ms fails) it connects and writes them again,
 * for DURATION_MS. Prints `{"connections":N}`.
 */
import { connect, type Socket } from "node:net";

const port = Number(process.env.PORT);
const clients = Number(process.env.CLIENTS ?? 1);
const pipelined = Number(process.env.PIPELINED ?? 5_000);
const endAt = performance.now() + Number(process.env.DURATION_MS ?? 4_000);

const GET = "GET /api/supply/total HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";
const flood = GET.repeat(pipelined);
const over = () => performance.now() > endAt;
let connections = 0;

async function client(): Promise<void> {
  while (!over()) {
    connections++;
    await new Promise<void>((resolve) => {
      const s: Socket = connect({ host: "127.0.0.1", port }, () => {
        s.pause();
        s.write(flood);
      });
      const poke = setInterval(() => {
        if (over()) s.destroy();
        else if (!s.writableNeedDrain) s.write(GET);
      }, 50);
      s.on("error", () => s.destroy());
      s.once("close", () => {
        clearInterval(poke);
        resolve();
      });
    });
  }
}

await Promise.all(Array.from({ length: clients }, client));
process.stdout.write(`${JSON.stringify({ connections })}\n`);
