/**
 * compose.yaml as operators use it (issue 29 item 7): every variable set in `.env` reaches the processes that read
 * it — the indexer and both API processes — except those compose's own topology decides, which are named here.
 *
 * No `docker compose` runs on these machines (the docker CLI has no compose plugin), so the file is resolved as
 * compose resolves it (https://docs.docker.com/compose/how-tos/environment-variables/envvars-precedence/): YAML
 * with merge keys, `${…}` interpolated from `.env` and the shell, each service's `env_file` entries (a missing one
 * with `required: false` skipped), then its `environment`, which wins. Where `docker compose` exists, the last test
 * holds this resolver to its `config` output.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../../api/config";
import { variablesInEnvFile } from "../support/envVariables";
import { REPO_ROOT } from "../support/ponder";

type Env = Record<string, string>;
type Service = {
  env_file?: string | (string | { path: string; required?: boolean })[];
  environment?: Record<string, string | number | boolean | null> | string[];
};
type Compose = { services: Record<string, Service> };

/** A `.env` file as compose reads one: KEY=VALUE lines, `#` comments, optional `export`, quotes stripped. */
function parseDotEnv(text: string): Env {
  const env: Env = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = line.match(/^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/);
    if (!m) continue;
    let value = m[2]!;
    const quoted = value.match(/^(["'])(.*)\1$/);
    if (quoted) value = quoted[2]!;
    else value = value.replace(/\s+#.*$/, "");
    env[m[1]!] = value;
  }
  return env;
}

/** `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `$VAR` and `$$`, as compose interpolates. */
function interpolate(value: string, vars: Env): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, name?: string, op?: string, arg?: string, bare?: string) => {
      if (whole === "$$") return "$";
      if (bare) return vars[bare] ?? "";
      const v = vars[name!];
      const empty = v === undefined || (op?.startsWith(":") && v === "");
      if (op?.endsWith("-")) return empty ? interpolate(arg ?? "", vars) : v!;
      if (op?.endsWith("?")) {
        if (empty) throw new Error(`required variable ${name} is missing: ${arg}`);
        return v!;
      }
      return v ?? "";
    },
  );
}

/** Each service's container environment, as `docker compose config` would print it. */
function resolveCompose(dir: string, shell: Env = {}): Record<string, Env> {
  const dotEnvPath = path.join(dir, ".env");
  const dotEnv = (() => {
    try {
      return parseDotEnv(readFileSync(dotEnvPath, "utf8"));
    } catch {
      return {};
    }
  })();
  const vars = { ...dotEnv, ...shell }; // the shell wins over .env for interpolation
  const compose = parse(readFileSync(path.join(dir, "compose.yaml"), "utf8"), { merge: true }) as Compose;
  const out: Record<string, Env> = {};
  for (const [name, service] of Object.entries(compose.services)) {
    const env: Env = {};
    const files = service.env_file === undefined ? [] : [service.env_file].flat();
    for (const entry of files) {
      const file = typeof entry === "string" ? { path: entry, required: true } : { required: true, ...entry };
      let text: string;
      try {
        text = readFileSync(path.join(dir, interpolate(file.path, vars)), "utf8");
      } catch (error) {
        if (file.required) throw error;
        continue;
      }
      Object.assign(env, parseDotEnv(text));
    }
    const environment = Array.isArray(service.environment)
      ? Object.fromEntries(service.environment.map((l) => [l.split("=")[0]!, l.split("=").slice(1).join("=")]))
      : (service.environment ?? {});
    for (const [k, v] of Object.entries(environment)) {
      if (v === null) {
        if (vars[k] !== undefined) env[k] = vars[k]!; // `KEY:` alone: from the shell (or .env)
        continue;
      }
      env[k] = interpolate(String(v), vars);
    }
    out[name] = env;
  }
  return out;
}

const dirs: string[] = [];
/** A folder holding this checkout's compose.yaml and, when given, a `.env`. */
function project(dotEnv?: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "compose-"));
  dirs.push(dir);
  copyFileSync(path.join(REPO_ROOT, "compose.yaml"), path.join(dir, "compose.yaml"));
  if (dotEnv !== undefined) writeFileSync(path.join(dir, ".env"), dotEnv);
  return dir;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Every variable .env.example names (set or commented out), each given a value of its own. */
const NAMES = variablesInEnvFile(readFileSync(path.join(REPO_ROOT, ".env.example"), "utf8"));
const FULL_ENV = Object.fromEntries(NAMES.map((n) => [n, `from-env-${n.toLowerCase()}`]));
const dotEnvText = (env: Env) =>
  `${Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n")}\n`;

const COMPOSE_DB = "postgresql://asset:asset@postgres:5432/asset";
/** What compose's topology decides, per service: everything else comes from .env. */
const DECIDED: Record<string, Env> = {
  indexer: {
    DATABASE_URL: COMPOSE_DB,
    DATABASE_PRIVATE_URL: COMPOSE_DB,
    REDIS_URL: "redis://redis:6379",
    PORT: "42070",
    HEALTHCHECK_PORT: "42070",
  },
  "api-1": {
    DATABASE_URL: COMPOSE_DB,
    DATABASE_PRIVATE_URL: COMPOSE_DB,
    REDIS_URL: "redis://redis:6379",
    PORT: "42069",
    HOST: "0.0.0.0",
    HEALTHCHECK_PORT: "42069",
    DATABASE_VIEWS_SCHEMA: "asset",
  },
};
DECIDED["api-2"] = DECIDED["api-1"]!;

describe("compose.yaml resolved with a .env", () => {
  it("every variable of .env.example set in .env reaches the indexer and both API processes, but what compose decides", () => {
    expect(NAMES.length).toBeGreaterThanOrEqual(30);
    const resolved = resolveCompose(project(dotEnvText(FULL_ENV)));
    for (const [service, decided] of Object.entries(DECIDED)) {
      const env = resolved[service]!;
      expect(env, service).toBeDefined();
      const want = { ...Object.fromEntries(NAMES.map((n) => [n, FULL_ENV[n]!])), ...decided };
      expect(env, service).toEqual(want);
    }
  });

  it("the settings the issue found lost (TRUSTED_PROXIES, RATE_LIMIT_*, METRICS_TOKEN) reach both API processes", () => {
    const settings = {
      RPC_URL: "https://base.example/key",
      NETWORK: "base",
      TRUSTED_PROXIES: "10.0.0.0/8",
      RATE_LIMIT_MAX: "50",
      RATE_LIMIT_WINDOW_SEC: "10",
      METRICS_TOKEN: "0123456789abcdef-token",
      MAX_CONNECTIONS_PER_IP: "64",
    };
    const resolved = resolveCompose(project(dotEnvText(settings)));
    for (const service of ["api-1", "api-2"]) expect(resolved[service], service).toMatchObject(settings);
  });

  it("the databases and Redis get none of it: no key or token leaks into containers that do not read them", () => {
    const resolved = resolveCompose(project(dotEnvText({ ...FULL_ENV, POSTGRES_PASSWORD: "pw" })));
    expect(resolved.postgres).toEqual({ POSTGRES_USER: "asset", POSTGRES_PASSWORD: "pw", POSTGRES_DB: "asset" });
    expect(resolved.redis).toEqual({});
    expect(resolved.indexer!.DATABASE_URL).toBe("postgresql://asset:pw@postgres:5432/asset");
  });

  it("without a .env it still resolves (required: false), RPC_URL from the shell; without RPC_URL it refuses", () => {
    const dir = project();
    const resolved = resolveCompose(dir, { RPC_URL: "https://base.example/key" });
    expect(resolved["api-1"]).toMatchObject({
      NETWORK: "base",
      RPC_URL: "https://base.example/key",
      LOG_LEVEL: "info",
    });
    expect(resolved["api-1"]!.TRUSTED_PROXIES).toBeUndefined();
    expect(() => resolveCompose(dir)).toThrow(/RPC_URL/);
  });

  it("a .env copied from .env.example starts every process on compose's NETWORK (base), not the devnet's", () => {
    const dir = project(readFileSync(path.join(REPO_ROOT, ".env.example"), "utf8"));
    const resolved = resolveCompose(dir, { RPC_URL: "https://base.example/key" });
    for (const service of ["indexer", "api-1", "api-2"]) {
      const env = resolved[service]!;
      expect(env.NETWORK, service).toBe("base");
      // What the process's own loadConfig makes of it (the indexer names its schema as the API does).
      expect(() => loadConfig(env, { deployment: true }), service).not.toThrow();
    }
  });

  it("the indexer's health is its liveness (/health: Ponder's /ready is 503 for the whole backfill); the APIs' the image's /ready", () => {
    const compose = parse(readFileSync(path.join(REPO_ROOT, "compose.yaml"), "utf8"), { merge: true }) as {
      services: Record<string, { healthcheck?: { test?: string[] } }>;
    };
    expect(compose.services.indexer!.healthcheck?.test).toEqual(["CMD", "node", "scripts/healthcheck.mjs", "/health"]);
    for (const api of ["api-1", "api-2"]) expect(compose.services[api]!.healthcheck).toBeUndefined();
  });

  it("the resolver: interpolation forms and .env syntax as compose reads them", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's syntax, not a template
    expect(interpolate("a${X}b${Y:-d}${Z-e}$$x$X", { X: "1", Z: "" })).toBe("a1bd$x1");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's syntax, not a template
    expect(() => interpolate("${X:?need X}", { X: "" })).toThrow(/need X/);
    expect(parseDotEnv('# c\nexport A=1\nB="two words"\nC=3 # note\n  D = 4\nlower=5\n')).toEqual({
      A: "1",
      B: "two words",
      C: "3",
      D: "4",
      lower: "5",
    });
  });
});

const dockerCompose = spawnSync("docker", ["compose", "version"], { encoding: "utf8" }).status === 0;

describe.skipIf(!dockerCompose)("docker compose config (where compose is installed)", () => {
  it("prints the same environments as the resolver above", () => {
    const dir = project(dotEnvText(FULL_ENV));
    const res = spawnSync("docker", ["compose", "--project-directory", dir, "config", "--format", "json"], {
      encoding: "utf8",
    });
    expect(res.status, res.stderr).toBe(0);
    const config = JSON.parse(res.stdout) as { services: Record<string, { environment?: Env }> };
    const ours = resolveCompose(dir);
    for (const [name, service] of Object.entries(config.services))
      expect(service.environment ?? {}, name).toEqual(ours[name]);
  });
});
