/**
 * Clients that hold idle connections and reconnect whenever one is closed, as a process of its own (its descriptors
 * are not the caller's). ADDRESSES addresses (127.0.1.1, 127.0.1.2, … — loopback is all local on Linux), each keeping
 * PER_ADDRESS connections to 127.0.0.1:PORT open, sending nothing; a connection the server closes (a 429, an idle
 * one closed to make room) is opened again 20 ms later, until DURATION_MS. Prints `{"held":N,…}` every 500 ms and a
 * last line at the end: connections held now, opened in all, and how the server ended the others (a whole 429,
 * closed without an answer, reset).
 */
import { connect, type Socket } from "node:net";

const port = Number(process.env.PORT);
const addresses = Number(process.env.ADDRESSES ?? 400);
const perAddress = Number(process.env.PER_ADDRESS ?? 50);
const until = performance.now() + Number(process.env.DURATION_MS ?? 10_000);
/** The first address's index (to give several holder processes distinct addresses). */
const first = Number(process.env.FIRST_ADDRESS ?? 0);

const address = (i: number) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;
const stats = { held: 0, opened: 0, refused: 0, unanswered: 0, reset: 0 };

function hold(localAddress: string): void {
  if (performance.now() >= until) return;
  stats.opened++;
  const s: Socket = connect({ host: "127.0.0.1", port, localAddress });
  let connected = false;
  let answer = "";
  s.on("connect", () => {
    connected = true;
    stats.held++;
  });
  s.on("data", (c) => {
    answer += c;
  });
  s.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "ECONNRESET") stats.reset++;
  });
  s.on("close", () => {
    if (connected) stats.held--;
    if (answer.startsWith("HTTP/1.1 429 ")) stats.refused++;
    else if (answer === "") stats.unanswered++;
    setTimeout(() => hold(localAddress), 20);
  });
}

for (let i = 0; i < addresses; i++) {
  for (let k = 0; k < perAddress; k++) hold(address(first + i));
  // The listen backlog: a few hundred at a time.
  if (i % 4 === 3) await new Promise((r) => setTimeout(r, 10));
}
const report = () => process.stdout.write(`${JSON.stringify(stats)}\n`);
const timer = setInterval(report, 500);
setTimeout(
  () => {
    clearInterval(timer);
    report();
    process.exit(0);
  },
  Math.max(0, until - performance.now()),
);
