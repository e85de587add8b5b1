import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MCP_PATH } from "../../api/paths";

// The README's "Connecting an MCP client" is copied into clients as written: every configuration it shows is valid
// JSON, points at the served MCP path, and has the shape its clients read — `"type": "http"` with a `url` for
// remote HTTP clients (Claude Code reads an entry without it as a local stdio server), VS Code's top-level
// `servers`, and a stdio `command` that runs the mcp-remote bridge for clients that only start local servers.

const REPO_ROOT = path.resolve(import.meta.dirname, "..", "..");
const README = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");

type Entry = { type?: string; url?: string; command?: string; args?: string[] };

/** The section's configurations: every fenced json block and every inline `{ … }` code span that parses. */
function configurations(): Record<string, Record<string, Entry>>[] {
  const heading = "### Connecting an MCP client\n";
  const start = README.indexOf(heading);
  expect(start, "the README has the section").toBeGreaterThan(-1);
  const rest = README.slice(start + heading.length);
  const next = rest.search(/^#{1,3} /m);
  const section = next === -1 ? rest : rest.slice(0, next);
  const candidates = [
    ...[...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!),
    ...[...section.replace(/```[\s\S]*?```/g, "").matchAll(/`(\{[^`]*\})`/g)].map((m) => m[1]!),
  ];
  return candidates.map((text) => JSON.parse(text));
}

describe("README: connecting an MCP client", () => {
  it("every configuration is JSON naming the MCP endpoint, in the shape its client reads", () => {
    const configs = configurations();
    expect(configs.length).toBeGreaterThanOrEqual(3);
    const entries = configs.flatMap((c) =>
      Object.entries(c).map(([root, servers]) => ({ root, entry: servers["asset-protocol"]! })),
    );
    for (const { root, entry } of entries) {
      expect(["mcpServers", "servers"]).toContain(root);
      expect(entry, root).toBeDefined();
      const url = entry.url ?? entry.args?.at(-1);
      expect(new URL(url!.replace("<host>", "example.org")).pathname).toBe(MCP_PATH);
    }
    const remote = entries.filter((e) => e.entry.url !== undefined);
    expect(remote.map((e) => e.root).sort()).toEqual(["mcpServers", "servers"]);
    for (const { entry } of remote) expect(entry.type).toBe("http");
    const bridged = entries.filter((e) => e.entry.command !== undefined);
    expect(bridged).toHaveLength(1);
    expect(bridged[0]!.entry).toMatchObject({ command: "npx", args: ["-y", "mcp-remote", expect.any(String)] });
    expect(bridged[0]!.entry.type).toBeUndefined();
  });

  it("the command line for Claude Code adds it over HTTP", () => {
    expect(README).toContain(`claude mcp add --transport http asset-protocol https://<host>${MCP_PATH}`);
  });
});
