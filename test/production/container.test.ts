/**
 * The container, without a Docker engine (none runs on these machines): the Dockerfile's stages are replayed
 * on this machine in two empty folders, instruction by instruction — the same COPY lists from the same
 * build context (.dockerignore applied), the same RUN scripts, the same ENV — and then the runtime stage's
 * CMD, its HEALTHCHECK and compose.yaml's indexer command run as an unprivileged user against Postgres and the
 * devnet. What is not replayed: the base image itself (node:24 slim; here the Node 24 that runs the tests,
 * copied into the stage as the image has its own), the image's layering, and compose's networking.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../devnet/anvil";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { createTestDatabase, REPO_ROOT, type TestDatabase, writeManifest } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

type Instruction = { op: string; args: string };
type Stage = { name: string; steps: Instruction[] };

/** The Dockerfile as stages of instructions (continuation lines joined, comments dropped). */
function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text.replace(/\\\n/g, " ").split("\n");
  for (const line of lines) {
    const t = line.trim();
    if (!t || t.startsWith("#")) continue;
    const [op, ...rest] = t.split(/\s+/);
    const args = rest.join(" ");
    if (op === "FROM") stages.push({ name: args.split(/\s+AS\s+/i)[1] ?? String(stages.length), steps: [] });
    else if (op === "ARG" && stages.length === 0) continue;
    else stages.at(-1)!.steps.push({ op: op!, args });
  }
  return stages;
}

/** The build context: the files git knows (a fresh clone's), minus .dockerignore's entries. */
function contextFiles(): string[] {
  const ignore = readFileSync(path.join(REPO_ROOT, ".dockerignore"), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const excluded = (f: string) => {
    let out = false;
    for (const p of ignore) {
      const negate = p.startsWith("!");
      const pat = negate ? p.slice(1) : p;
      const re = new RegExp(`^${pat.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}(/|$)`);
      if (re.test(f)) out = !negate;
    }
    return out;
  };
  return execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  })
    .split("\n")
    .filter((f) => f && !excluded(f));
}

const unprivileged = (() => {
  const id = (flag: string) => Number(execFileSync("id", [flag, "nobody"], { encoding: "utf8" }).trim());
  return { name: "nobody", uid: id("-u"), gid: id("-g") };
})();

/** Replays one stage into `dir`: returns its ENV, USER, CMD and HEALTHCHECK command. */
function replay(stage: Stage, dir: string, from: Record<string, string>, files: string[]) {
  const env: Record<string, string> = {};
  let user: string | null = null;
  let cmd: string[] | null = null;
  let healthcheck: string[] | null = null;
  let workdir = dir;
  for (const { op, args } of stage.steps) {
    if (op === "WORKDIR") {
      workdir = dir; // /app: the stage's folder
      mkdirSync(workdir, { recursive: true });
    } else if (op === "ARG") {
      // A build argument: its default here (no --build-arg), as `docker build` without one.
      const [name, value = ""] = args.split("=");
      env[name!] = value.replace(/^"(.*)"$/, "$1");
    } else if (op === "ENV") {
      for (const m of args.matchAll(/(\w+)=(\S+)/g)) env[m[1]!] = m[2]!;
    } else if (op === "COPY") {
      const fromStage = args.match(/^--from=(\S+)\s+/)?.[1];
      const parts = args.replace(/^--\S+\s+/, "").split(/\s+/);
      const dest = path.join(workdir, parts.pop()!);
      for (const src of parts) {
        if (fromStage) {
          cpSync(path.join(from[fromStage]!, src.replace(/^\/app\/?/, "")), dest, { recursive: true });
          continue;
        }
        const matched = src === "." ? files : files.filter((f) => f === src || f.startsWith(`${src}/`));
        expect(matched.length, `COPY ${src}: nothing in the build context`).toBeGreaterThan(0);
        for (const f of matched) {
          // `COPY a b ./` puts files into ./; `COPY dir ./dir` the directory's content into ./dir.
          const rel =
            src === "." || parts.length > 1 || dest.endsWith("/") ? f : path.relative(src, f) || path.basename(f);
          const target =
            parts.length > 1 || args.trim().endsWith("/") ? path.join(dest, path.basename(f)) : path.join(dest, rel);
          mkdirSync(path.dirname(target), { recursive: true });
          copyFileSync(path.join(REPO_ROOT, f), target);
        }
      }
    } else if (op === "RUN") {
      const m = args.match(/^sh (scripts\/container\/[\w-]+\.sh)(?: (\w+))?$/);
      expect(m, `RUN must call a script of scripts/container/: ${args}`).not.toBeNull();
      const argv = [m![1]!, ...(m![2] ? [m![2] === "node" ? unprivileged.name : m![2]] : [])];
      // As Docker runs it: as the stage's USER when one was set (`node`, played by `nobody`), else as root.
      const as = user === null ? {} : { uid: unprivileged.uid, gid: unprivileged.gid };
      // The image's Node first on PATH, as the base image has it (the test's own may sit where `nobody` cannot go).
      const PATH = `${path.join(dir, ".node")}:${process.env.PATH}`;
      const run = spawnSync("sh", argv, {
        cwd: workdir,
        env: { ...process.env, ...env, PATH },
        encoding: "utf8",
        ...as,
      });
      expect(run.status, `RUN ${args}:\n${run.stdout}\n${run.stderr}`).toBe(0);
    } else if (op === "USER") user = args;
    else if (op === "CMD") cmd = JSON.parse(args);
    else if (op === "HEALTHCHECK") healthcheck = JSON.parse(args.replace(/^.*?CMD\s+/, ""));
    else if (!["EXPOSE", "STOPSIGNAL"].includes(op)) throw new Error(`unknown instruction ${op}`);
  }
  return { env, user, cmd, healthcheck };
}

let devnet: TestDevnet;
let database: TestDatabase;
let work: string;
let runtime: ReturnType<typeof replay>;
let runtimeDir: string;
const children: ServiceChild[] = [];

beforeAll(async () => {
  work = mkdtempSync(path.join(os.tmpdir(), "image-"));
  chmodSync(work, 0o755);
  const stages = parseDockerfile(readFileSync(path.join(REPO_ROOT, "Dockerfile"), "utf8"));
  expect(stages.map((s) => s.name)).toEqual(["build", "runtime"]);
  const files = contextFiles();
  const dirs: Record<string, string> = {};
  for (const stage of stages) {
    dirs[stage.name] = path.join(work, stage.name);
    mkdirSync(dirs[stage.name]!);
    // The base image's Node: a copy inside the stage's folder, so its steps and the unprivileged user run it.
    mkdirSync(path.join(dirs[stage.name]!, ".node"));
    copyFileSync(process.execPath, path.join(dirs[stage.name]!, ".node", "node"));
    chmodSync(path.join(dirs[stage.name]!, ".node", "node"), 0o755);
    const result = replay(stage, dirs[stage.name]!, dirs, files);
    if (stage.name === "runtime") runtime = result;
  }
  runtimeDir = dirs.runtime!;
  devnet = await startDevnet({ seed: true });
  await devnet.clients.testClient.mine({ blocks: 32 });
  database = await createTestDatabase(PG_URL);
}, 600_000);

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop("SIGKILL")));
  await database?.drop();
  await devnet?.stop();
  // ~1 GB of node_modules: removed in the background, so a busy disk cannot time the hook out.
  if (work) spawn("rm", ["-rf", work], { detached: true, stdio: "ignore" }).unref();
});

const imageEnv = () => ({
  ...runtime.env,
  PATH: `${path.join(runtimeDir, ".node")}:/usr/bin:/bin`,
  HOME: runtimeDir,
});
const asImageUser = () => {
  expect(runtime.user).toBe("node"); // the image's user; `nobody` plays it here
  return { uid: unprivileged.uid, gid: unprivileged.gid };
};

describe("the image's runtime stage", () => {
  it("holds only runtime dependencies: ≤ 300 MB, no transpiler, no Scalar package", () => {
    const mb = Number(
      execFileSync("du", ["-sm", path.join(runtimeDir, "node_modules")], { encoding: "utf8" }).split("\t")[0],
    );
    console.log(`production install (npm ci --omit=dev): ${mb} MB`);
    expect(mb).toBeLessThanOrEqual(300);
    // (esbuild and typescript are there: Ponder's vite and its peer dependency, for the indexer.)
    for (const dev of ["tsx", "@scalar/api-reference", "vitest", "@biomejs/biome", "solc", "@foundry-rs/anvil"])
      expect(existsSync(path.join(runtimeDir, "node_modules", dev)), dev).toBe(false);
  });

  it("runs the indexer (compose's command) and the API process (the CMD) as the image's user; HEALTHCHECK passes; SIGTERM exits 0", async () => {
    const manifestFile = writeManifest(devnet.deployment.manifest);
    chmodSync(path.dirname(manifestFile), 0o755);
    chmodSync(manifestFile, 0o644);
    const dbUrl = (database.forPonder("asset_v1") as { url: string }).url;
    const compose = readFileSync(path.join(REPO_ROOT, "compose.yaml"), "utf8");
    const indexerCommand: string[] = JSON.parse(
      compose.match(/^ {4}command:\s*(\[[^\]]*ponder", "start"[^\]]*\])/m)![1]!,
    );
    const indexerPort = await freePort();
    const argv = indexerCommand.map((a) => (a === "42070" ? String(indexerPort) : a === "0.0.0.0" ? "127.0.0.1" : a));
    const user = asImageUser();
    const indexer = await spawnService({
      command: "start",
      rpcUrl: devnet.rpcUrl,
      manifestFile,
      databaseUrl: dbUrl,
      schema: "asset_v1",
      port: indexerPort,
      env: imageEnv(),
      install: { cwd: runtimeDir, argv: [path.join(runtimeDir, ".node", "node"), ...argv], ...user },
    });
    children.push(indexer);
    await indexer.waitFor200("/ready", 180_000);

    const api = await spawnService({
      command: "api",
      rpcUrl: devnet.rpcUrl,
      manifestFile,
      databaseUrl: dbUrl,
      schema: "asset_v1",
      viewsSchema: "asset",
      // Node's own account of its code cache (on stderr): the image's was made by warm-code-cache.sh at build.
      env: { ...imageEnv(), REDIS_URL: "", LOG_LEVEL: "warn", NODE_DEBUG_NATIVE: "COMPILE_CACHE" },
      install: {
        cwd: runtimeDir,
        // `node` wherever the command names it (after `env NAME=VALUE …`, which sets the allocator).
        argv: runtime.cmd!.map((a) => (a === "node" ? path.join(runtimeDir, ".node", "node") : a)),
        ...user,
      },
    });
    children.push(api);
    await api.waitFor200("/health", 30_000);
    // The first start of the image reads the code cache made when it was built, not compiling the bundle afresh.
    expect(api.log()).toMatch(/V8 code cache for ESM file:\/\/\S*\/dist\/server\/main\.js was accepted/);
    const check = (port: number) =>
      spawnSync(path.join(runtimeDir, ".node", "node"), runtime.healthcheck!.slice(1), {
        cwd: runtimeDir,
        env: { ...imageEnv(), PORT: String(port), HEALTHCHECK_PORT: String(port) },
        ...user,
      }).status;
    let healthy = 1;
    for (let i = 0; i < 100 && healthy !== 0; i++) {
      healthy = check(api.port) ?? 1;
      if (healthy !== 0) await new Promise((r) => setTimeout(r, 200));
    }
    expect(healthy).toBe(0);
    expect(check(indexer.port)).toBe(0);
    expect(indexer.log()).toContain(`port=${indexerPort}`); // the image's ENV does not move the indexer's port
    expect(check(await freePort())).toBe(1); // nothing listening: unhealthy, not a hang

    const supply = await fetch(`${api.url}/api/supply/max`);
    expect(supply.status).toBe(200);
    const docs = await (await fetch(`${api.url}/docs`)).text();
    const script = docs.match(/<script src="(\/docs\/assets\/scalar\.[^"]+)">/)![1]!;
    const ui = await fetch(`${api.url}${script}`, { headers: { "accept-encoding": "br" } });
    expect([ui.status, ui.headers.get("content-encoding")]).toEqual([200, "br"]);
    const state = await fetch(`${api.url}/api/mcp/v1/state/${DEVNET_ACCOUNTS.alice.address}`);
    expect(state.status).toBe(200);
    expect((await state.json()).source).toBe("subgraph+rpc");

    expect(await api.stop("SIGTERM")).toEqual({ code: 0, signal: null });
    expect((await indexer.stop("SIGTERM")).signal).toBeNull();
  }, 300_000);
});
