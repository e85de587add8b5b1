/**
 * The app is routed by Hono's RegExpRouter (one regular expression per method), not the TrieRouter: SmartRouter keeps
 * the first router that takes every route, and a single pattern the RegExpRouter refuses (a literal segment beside a
 * parameter: /leaderboards/ve beside /leaderboards/:board) sent every request of the app to the TrieRouter (its
 * search, path splitting and dispatch ~3 µs of a ~150 µs index request: bench/index-http.ts with PROFILE_DIR). The
 * ve board and the duration boards now share one pattern per depth (api/index/router.ts); these requests show each
 * board's own handler still answers its paths — its own parameters judged before the index is asked.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";

const app = createApp({ config: loadConfig({ NETWORK: "base" }), rpc: null, logger: silentLogger });
const get = async (path: string) => {
  const res = await app.request(`/api/index/v1${path}`);
  return { status: res.status, body: (await res.json()) as { error?: string; detail?: { boards?: string[] } } };
};
const holder = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

describe("routing", () => {
  it("is the RegExpRouter's for every route of the app", async () => {
    await app.request("/health");
    expect(app.router.name).toBe("SmartRouter + RegExpRouter");
  });

  it("answers /leaderboards/ve and its rank lookup with the ve board's handlers, the others with the duration boards'", async () => {
    // No index here: a request whose parameters pass is 503 INDEX_UNAVAILABLE, so the status says whose checks ran.
    expect((await get("/leaderboards/ve")).status).toBe(503);
    expect((await get(`/leaderboards/ve/${holder}`)).status).toBe(503);
    // `window` is the duration boards' parameter, not the ve board's (400 there), and required by them.
    expect((await get("/leaderboards/ve?window=7d")).body.error).toBe("BAD_PARAMS");
    expect((await get("/leaderboards/takeovers?window=7d")).status).toBe(503);
    expect((await get(`/leaderboards/takeovers/${holder}?window=7d`)).status).toBe(503);
    const unknown = await get("/leaderboards/nope?window=7d");
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail?.boards).toContain("ve");
    expect((await get("/leaderboards/nope/0x00")).status).toBe(404);
    expect((await get("/leaderboards/ve/0x00")).body.error).toBe("BAD_PARAMS");
  });
});
