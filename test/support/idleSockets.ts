/**
 * A client holding idle connections, as a process of its own (its descriptors are not the test's: the
 * process's open-file limit bounds how many one process may hold). Opens COUNT connections to 127.0.0.1:PORT
 * from LOCAL_ADDRESS, sending nothing, in waves of 200 (the listen backlog), then holds the open ones until
 * killed, printing `{"opened":N,"open":M,"refused":R,"unanswered":U,"reset":S,"failed":F}` every 200 ms (the
 * latest line is the current count). How the server ended the others: `refused` counts a whole 429 followed by
 * its FIN, `unanswered` a FIN with nothing before it, `reset` a reset; `failed` counts every error.
 */
import { connect, type Socket } from "node:net";

const port = Number(process.env.PORT);
const count = Number(process.env.COUNT ?? 1_000);
const localAddress = process.env.LOCAL_ADDRESS ?? "127.0.0.1";

const sockets: Socket[] = [];
let failed = 0;
let refused = 0;
let unanswered = 0;
let reset = 0;
/** Settles once `s` connected, or closed (refused) before. */
const settled = (s: Socket) =>
  new Promise<void>((resolve) => {
    s.once("connect", () => resolve());
    s.once("close", () => resolve());
    let answer = "";
    s.on("data", (c) => {
      answer += c;
    });
    // A whole answer: the head, then as many bytes as it says.
    s.once("end", () => {
      const [head, body] = answer.split("\r\n\r\n", 2);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head ?? "")?.[1]);
      if (head?.startsWith("HTTP/1.1 429 ") && Buffer.byteLength(body ?? "") === length) refused++;
      else if (answer === "") unanswered++;
    });
    s.on("error", (e: NodeJS.ErrnoException) => {
      failed++;
      if (e.code === "ECONNRESET") reset++;
    });
  });
for (let done = 0; done < count; ) {
  const wave = Math.min(200, count - done);
  const batch = Array.from({ length: wave }, () => connect({ host: "127.0.0.1", port, localAddress }));
  sockets.push(...batch);
  await Promise.all(batch.map(settled));
  done += wave;
}
const report = () => {
  const open = sockets.filter((s) => !s.destroyed && s.readyState === "open").length;
  process.stdout.write(`${JSON.stringify({ opened: sockets.length, open, refused, unanswered, reset, failed })}\n`);
};
report();
setInterval(report, 200);
