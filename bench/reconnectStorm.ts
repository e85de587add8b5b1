/**
 * Issue 30's reconnect storm, shared by bench/abuse-choices.ts and bench/abuse-soak.ts: 400 loopback addresses × 50
 * idle connections that reconnect when closed, from two processes of test/support/reconnectingIdle.ts (200 addresses
 * each), for `durationMs`; optionally at nice 19, so the storm's own CPU yields to what it is measured against.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

export function spawnReconnectStorm(
  base: string,
  durationMs: number,
  options: { nice: boolean; stdout: "pipe" | "ignore" },
): ChildProcess[] {
  const script = [
    process.execPath,
    "--import",
    "tsx",
    path.join(import.meta.dirname, "../test/support/reconnectingIdle.ts"),
  ];
  const [command, ...args] = options.nice ? ["nice", "-n", "19", ...script] : script;
  return [0, 200].map((first) =>
    spawn(command as string, args, {
      env: {
        ...process.env,
        PORT: new URL(base).port,
        ADDRESSES: "200",
        FIRST_ADDRESS: String(first),
        PER_ADDRESS: "50",
        DURATION_MS: String(durationMs),
      },
      stdio: ["ignore", options.stdout, "inherit"],
    }),
  );
}
