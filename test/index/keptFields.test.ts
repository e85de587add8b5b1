import { createHash } from "node:crypto";
import { Hono } from "hono";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import type { AppEnv } from "../../api/http/env";
import { answer, answerFields, KEPT_FIELDS, keptFields, membersOf } from "../../api/index/answer";
import type { IndexHead } from "../../api/read/contract";

const rt = { chainId: 8453, staleSeconds: 60, finality: null };
const head: IndexHead = { block: 120n, time: 1_764_061_200n, finalized: 100n };
const at = { block: 110n, time: 1_764_061_180n, head, pinned: true };
const body = {
  holders: 2,
  rows: [{ rank: 1, address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", veWei: "1", locks: 1 }],
  nextCursor: null,
  note: 'quote " and \\ and é',
};

/** What answer() wrote before the body's members were joined as text: the envelope and the body spread together. */
const formerText = (fresh: { indexLagSeconds: number; stale: boolean }, b: object) =>
  JSON.stringify({
    ok: true,
    chainId: rt.chainId,
    blockNumber: at.block.toString(),
    blockTimestamp: at.time.toString(),
    ...fresh,
    ...b,
  });

describe("answer as text (api/index/answer.ts)", () => {
  it("answerFields writes the bytes answer() writes, and both what the spread object serialised to", async () => {
    // One clock for the three answers: indexLagSeconds is read from it, and a second's turn between them failed this.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const app = new Hono<AppEnv>();
    app.get("/object", (c) => answer(c, rt, at, body));
    app.get("/text", (c) => answerFields(c, rt, at, () => membersOf(body)));
    app.get("/empty", (c) => answer(c, rt, at, {}));
    const [a, b, e] = await Promise.all(["/object", "/text", "/empty"].map((p) => app.request(p)));
    const [ta, tb, te] = await Promise.all([a!.text(), b!.text(), e!.text()]);
    expect(tb).toBe(ta);
    const parsed = JSON.parse(ta) as { indexLagSeconds: number; stale: boolean };
    const fresh = { indexLagSeconds: parsed.indexLagSeconds, stale: parsed.stale };
    expect(ta).toBe(formerText(fresh, body));
    expect(te).toBe(formerText(fresh, {}));
    for (const h of ["content-type", "cache-control", "etag"]) expect(b!.headers.get(h)).toBe(a!.headers.get(h));
  });

  it("the tag names the body: the same body at the block is 304, another body at the same block (a reorg's, a redeploy's) a 200 with another tag", async () => {
    const app = new Hono<AppEnv>();
    let served = body as object;
    app.get("/x", (c) => answerFields(c, rt, at, () => membersOf(served)));
    const first = await app.request("/x");
    const tag = first.headers.get("etag")!;
    expect(tag).toMatch(/^W\/"8453-110-[\w-]{16}"$/);
    expect((await app.request("/x", { headers: { "if-none-match": tag } })).status).toBe(304);
    served = { ...body, other: 1 };
    const changed = await app.request("/x", { headers: { "if-none-match": tag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(tag);
    // The block's name alone (the tag of the code before) no longer confirms anything.
    expect((await app.request("/x", { headers: { "if-none-match": `W/"8453-110"` } })).status).toBe(200);
  });
  it("the tag's digest is SHA-1 of build, block time and members, for a small body (one call) and a large one (in parts)", async () => {
    const app = new Hono<AppEnv>();
    const built = { ...at, head: { ...head, build: "b1d" } };
    const small = membersOf(body);
    // Past the one-call size, with a non-ASCII character: hashed as UTF-8 either way.
    const large = membersOf({ ...body, rows: Array.from({ length: 1000 }, (_, i) => ({ i, note: "é…" })) });
    expect(large.length).toBeGreaterThan(16 * 1024);
    for (const members of [small, large])
      app.get(`/${members.length}`, (c) => answerFields(c, rt, built, () => members));
    for (const members of [small, large]) {
      const tag = (await app.request(`/${members.length}`)).headers.get("etag");
      const digest = createHash("sha1").update(`b1d:${at.time}:${members}`).digest("base64url").slice(0, 16);
      expect(tag).toBe(`W/"8453-110-${digest}"`);
    }
  });

  it("a large kept body's digest is kept, but only for its build and block time", async () => {
    const app = new Hono<AppEnv>();
    const large = membersOf({ rows: "r".repeat(4_000) });
    let where = at;
    app.get("/x", (c) => answerFields(c, rt, where, () => large));
    const tag = async () => (await app.request("/x")).headers.get("etag")!;
    const first = await tag();
    expect(await tag()).toBe(first);
    where = { ...at, time: at.time + 2n };
    const otherTime = await tag();
    expect(otherTime).not.toBe(first);
    where = { ...at, head: { ...at.head, build: "another" } };
    expect(await tag()).not.toBe(first);
    where = at;
    expect(await tag()).toBe(first);
  });
});

describe("keptFields", () => {
  it("makes a body once per owner and key, and serves its text after", () => {
    const owner = {};
    let made = 0;
    const make = () => {
      made++;
      return body;
    };
    const first = keptFields(rt, owner, "0:100", make);
    expect(first).toBe(membersOf(body));
    expect(keptFields(rt, owner, "0:100", make)).toBe(first);
    expect(made).toBe(1);
    keptFields(rt, owner, "100:200", make);
    keptFields(rt, {}, "0:100", make);
    expect(made).toBe(3);
    // Another runtime (another cursor key) does not read this one's text for the same owner.
    keptFields({ ...rt }, owner, "0:100", make);
    expect(made).toBe(4);
  });

  it("keeps at most KEPT_FIELDS.perOwner keys an owner, the least recently used going first", () => {
    const owner = {};
    let made = 0;
    const make = () => {
      made++;
      return { n: made };
    };
    for (let i = 0; i < KEPT_FIELDS.perOwner; i++) keptFields(rt, owner, String(i), make);
    keptFields(rt, owner, "0", make); // used again: the newest
    expect(made).toBe(KEPT_FIELDS.perOwner);
    keptFields(rt, owner, "new", make); // one past the bound: "1" goes
    keptFields(rt, owner, "0", make);
    expect(made).toBe(KEPT_FIELDS.perOwner + 1);
    keptFields(rt, owner, "1", make);
    expect(made).toBe(KEPT_FIELDS.perOwner + 2);
  });

  it("does not keep a body larger than KEPT_FIELDS.maxChars", () => {
    const owner = {};
    let made = 0;
    const large = () => {
      made++;
      return { text: "x".repeat(KEPT_FIELDS.maxChars) };
    };
    const once = keptFields(rt, owner, "large", large);
    expect(keptFields(rt, owner, "large", large)).toBe(once);
    expect(made).toBe(2);
  });
});
