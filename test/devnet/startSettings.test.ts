import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { startSettings, urlHost } from "../../devnet/startSettings";
import { REPO_ROOT } from "../support/ponder";

// `npm start`'s variables follow the configuration's rule (docs/configuration.md): trimmed, an empty value is unset.
// `PORT=` once meant port 0 (printed as the API's URL, then Ponder refused API_PORT, a variable nobody had set).

describe("npm start's PORT, ANVIL_PORT and HOST", () => {
  it("unset or empty: the defaults", () => {
    const defaults = { port: 42069, anvilPort: 8545, host: "127.0.0.1" };
    expect(startSettings({})).toEqual(defaults);
    expect(startSettings({ PORT: "", ANVIL_PORT: "", HOST: "" })).toEqual(defaults);
    expect(startSettings({ PORT: "  ", ANVIL_PORT: " ", HOST: " " })).toEqual(defaults);
  });

  it("set: taken, trimmed; a given HOST is where the API listens", () => {
    expect(startSettings({ PORT: " 43251 ", ANVIL_PORT: "43252", HOST: " 0.0.0.0 " })).toEqual({
      port: 43251,
      anvilPort: 43252,
      host: "0.0.0.0",
    });
  });

  it.each([
    ["PORT", "abc"],
    ["PORT", "0"],
    ["PORT", "70000"],
    ["ANVIL_PORT", "85.45"],
    ["ANVIL_PORT", "-1"],
  ])("%s=%s stops the stack naming the variable, not echoing the value", (name, value) => {
    expect(() => startSettings({ [name]: value })).toThrow(
      new RegExp(`^invalid configuration: ${name}: must be a whole number between 1 and 65535$`),
    );
  });

  it("names both ports at once", () => {
    expect(() => startSettings({ PORT: "x", ANVIL_PORT: "y" })).toThrow(/PORT: .*; ANVIL_PORT: /);
  });

  it("prints a wildcard address as the loopback a browser on this machine reaches", () => {
    expect(urlHost("127.0.0.1")).toBe("127.0.0.1");
    expect(urlHost("0.0.0.0")).toBe("127.0.0.1");
    expect(urlHost("::")).toBe("[::1]");
    expect(urlHost("::1")).toBe("[::1]");
    expect(urlHost("localhost")).toBe("localhost");
  });
});

describe("devnet/start.ts (what `npm start` execs after its build)", () => {
  it("a bad PORT stops it before anvil starts, naming PORT", () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "devnet/start.ts"], {
      cwd: REPO_ROOT,
      env: { ...process.env, PORT: "abc", ANVIL_PORT: "" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("invalid configuration: PORT: must be a whole number between 1 and 65535");
    expect(run.stdout).not.toContain("anvil ");
  });
});
