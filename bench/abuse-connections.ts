/**
 * Connection floods past the per-address cap, against the API process (`npm run serve:api`, default limits) over
 * the reads devnet: the address already holds MAX_CONNECTIONS_PER_IP (256) idle connections, and
 * 1. reconnects as fast as it can (64 loops, each: connect, GET /health, read until closed): every refusal should
 *    be the 429, none a reset;
 * 2. the same with connections that never close their side, each kept 3 s (the server lets each go after 1 s;
 *    past the refusals answered at once, 1,000 here, a refusal is closed unanswered).
 * The generator (bench/connectionFlood.ts) runs in a process of its own at nice 19 (FLOOD_NICE=0: normal
 * priority). Printed with each: how the connections ended, the API's peak RSS and descriptors (from /proc), and
 * another address's `/health` (fresh connections) against the same before the flood.
 * Usage: npx tsx bench/abuse-connections.ts
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { childEnv, runFloodScript, startApiChild } from "../test/support/apiProcess";
import { buildOnce } from "../test/support/build";
import { getFrom } from "../test/support/rawHttp";
import { startReadsDevnet } from "../test/support/readsDevnet";

const ATTACKER = "127.0.0.9";
const FLOOD_NICE = Number(process.env.FLOOD_NICE ?? 19);
const OTHER = "127.0.0.2";
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const descriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/** Another address's /health, one request at a time on fresh connections, while `during` runs (or for `ms`). */
async function otherClient(base: string, ms: number, during?: Promise<unknown>) {
  const samples: number[] = [];
  let pending = during !== undefined;
  during?.finally(() => {
    pending = false;
  });
  const until = performance.now() + ms;
  let failed = 0;
  while (performance.now() < until || pending) {
    const t0 = performance.now();
    const { status } = await getFrom(`${base}/health`, OTHER);
    if (status !== 200) failed++;
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { p50: at(0.5).toFixed(2), p99: at(0.99).toFixed(2), n: samples.length, failed };
}

buildOnce();
const devnet = await startReadsDevnet();
const dir = mkdtempSync(path.join(tmpdir(), "abuse-conn-"));
const api = await startApiChild({ ...childEnv(devnet, dir), LOG_LEVEL: "error" });
const pid = api.child.pid!;
const port = new URL(api.base).port;
try {
  const idle = await otherClient(api.base, 2_000);
  // The address's 256 connections, each opened again when the server closes it (its idle timeout): the cap stays full.
  let holding = true;
  const held = new Set<Socket>();
  const holdOne = (): Promise<void> =>
    new Promise((resolve) => {
      const s = connect({ host: "127.0.0.1", port: Number(port), localAddress: ATTACKER }, () => resolve());
      held.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        held.delete(s);
        resolve();
        if (holding) setTimeout(holdOne, 10);
      });
    });
  await Promise.all(Array.from({ length: 256 }, holdOne));
  await new Promise((r) => setTimeout(r, 500));
  const base = { rss: rssMb(pid), fds: descriptors(pid) };
  console.log(
    `base (256 idle held): RSS ${base.rss.toFixed(0)} MB, ${base.fds} descriptors; other /health idle ${JSON.stringify(idle)}; load ${load()}`,
  );
  for (const [name, env] of [
    ["reconnect", { LINGER: "0" }],
    ["never close", { LINGER: "1" }],
  ] as const) {
    let peakRss = 0;
    let peakFds = 0;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, rssMb(pid));
      peakFds = Math.max(peakFds, descriptors(pid));
    }, 100);
    const flood = runFloodScript<{ connections: number; outcomes: Record<string, number> }>(
      path.join(import.meta.dirname, "connectionFlood.ts"),
      { PORT: port, LOCAL_ADDRESS: ATTACKER, DURATION_MS: "6000", CONCURRENCY: "64", ...env },
      FLOOD_NICE,
    );
    await new Promise((r) => setTimeout(r, 500));
    const other = await otherClient(api.base, 4_000, flood);
    const result = await flood;
    clearInterval(sampler);
    await new Promise((r) => setTimeout(r, 4_000));
    console.log(
      `${name}: ${result.connections} connections ${JSON.stringify(result.outcomes)}; API peak RSS +${(peakRss - base.rss).toFixed(0)} MB, ` +
        `peak ${peakFds} descriptors (base ${base.fds}), ${descriptors(pid)} 4 s after, RSS ${(rssMb(pid) - base.rss).toFixed(0)} MB vs base; ` +
        `other /health ${JSON.stringify(other)}; load ${load()}`,
    );
  }
  holding = false;
  for (const s of held) s.destroy();
} finally {
  api.child.kill("SIGKILL");
  await devnet.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
