/**
 * A head read pinned to the head its commit notified (api/read/notifiedHead.ts), not to a probe of the index: the
 * NotifiedHead's rules (fresh while listening and notified within freshMs; a polled head, a closed connection or an
 * old notification → probe), then on the real app over a synthetic index (in-memory PGlite) with the signal told by
 * the test as the NOTIFY would: the ve board, its rank lookup, the stats, a duration board and GraphQL at the head
 * send no probe and answer, byte for byte but the freshness fields, what an app without the signal answers at that
 * block; a head the index moved to without a notification is not seen until the next (the bounded staleness the
 * module documents), `minBlock` above the notified head probes and is answered at the index's head.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotifiedHead } from "../../api/read/notifiedHead";
import { ofBlock, readIndex as read } from "../support/appAnswers";
import type { SyntheticIndex } from "../support/syntheticIndex";
import { metricOf, type ToldApps, toldApps } from "../support/toldApps";
import { toldSignal } from "../support/toldSignal";

describe("NotifiedHead", () => {
  it("is the last notified head while listening and fresh; a polled head, a closed connection, an old one: none", () => {
    const told = toldSignal();
    let now = 1_000;
    let listening = true;
    const head = new NotifiedHead(
      {
        subscribe: told.signal.subscribe,
        get listening() {
          return listening;
        },
      },
      { freshMs: 3_000, now: () => now },
    );
    expect(head.fresh()).toBeUndefined();
    told.tell(10n, 100n);
    expect(head.fresh()).toEqual({ block: 10n, time: 100n });
    now += 3_000;
    expect(head.fresh()).toEqual({ block: 10n, time: 100n });
    now += 1;
    expect(head.fresh()).toBeUndefined();
    told.tell(11n, 102n);
    expect(head.fresh()).toEqual({ block: 11n, time: 102n });
    // A reorg's lower head is the head (the last told, not the highest).
    told.tell(9n, 98n);
    expect(head.fresh()).toEqual({ block: 9n, time: 98n });
    listening = false;
    expect(head.fresh()).toBeUndefined();
    listening = true;
    expect(head.fresh()).toEqual({ block: 9n, time: 98n });
    // Heard without its time: the signal's poll (a head that moved without a notification).
    told.tell(12n);
    expect(head.fresh()).toBeUndefined();
    told.tell(13n, 106n);
    expect(head.fresh()).toEqual({ block: 13n, time: 106n });
  });
});

let apps: ToldApps;
let index: SyntheticIndex;
let notified: ToldApps["listening"];
let plain: ToldApps["plain"];
/** The notified app's probes of the index's head for a request. */
let probes = 0;
const commit = (block: bigint) => apps.commit(block);
const silently = (block: bigint) => apps.silently(block);

beforeAll(async () => {
  apps = await toldApps(17, (lockIndex) => {
    const probe = lockIndex.probe;
    lockIndex.probe = (block, signal) => {
      // A request's probe of the head carries its deadline's signal; the anchor's and the compute-ahead's carry none.
      if (block === null && signal !== undefined) probes++;
      return probe(block, signal);
    };
  });
  ({ index, listening: notified, plain } = apps);
}, 60_000);

afterAll(async () => {
  await apps?.close();
});

const meta = async (app: ToldApps["listening"], block?: bigint) => {
  const res = await app.request("/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      query: `{ _meta${block === undefined ? "" : `(block: {number: "${block}"})`} { block blockTimestamp head } }`,
    }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return (JSON.parse(text) as { data: { _meta: { block: string; blockTimestamp: string; head: string } } }).data._meta;
};

/** The notified app's api_index_head_pins_total by `how` (0 until counted). */
const pins = (how: "notified" | "probed") => metricOf(notified, `api_index_head_pins_total{how="${how}"}`);

describe("head reads pinned to the notified head", () => {
  it("send no probe, and answer what the index holds at that block", async () => {
    const blocks = [...new Set(index.events.map((e) => e.blockNumber))].sort((a, b) => (a < b ? -1 : 1));
    const h = blocks.at(-20)!;
    const owner = index.events.find((e) => e.owner !== null && e.blockNumber <= h - 50n)!.owner!;
    const paths = [
      "/leaderboards/ve?limit=5",
      `/leaderboards/ve/${owner}`,
      "/stats",
      "/leaderboards/takeovers?window=lifetime&limit=3",
    ];
    // A process's first head read probes: a notified head is used once a statement has found the index of this
    // chain (api/read/indexChain.ts).
    const first = probes;
    await read(notified, "/stats");
    expect(probes).toBe(first + 1);
    for (const b of [h, h + 1n]) {
      await commit(b);
      const before = probes;
      const [notifiedBefore, probedBefore] = [await pins("notified"), await pins("probed")];
      for (const path of paths) {
        const answer = await read(notified, path);
        expect(answer.blockNumber, path).toBe(String(b));
        const pinned = await read(plain, `${path}${path.includes("?") ? "&" : "?"}block=${b}`);
        expect(ofBlock(answer), path).toEqual(ofBlock(pinned));
      }
      const m = await meta(notified);
      expect(m.block).toBe(String(b));
      expect(m.head).toBe(String(b));
      expect(m.blockTimestamp).toBe(String(index.blockTimes.get(b)));
      expect(probes, "probes at a notified head").toBe(before);
      // Five pinned (four routes and _meta); the metrics say so.
      expect(await pins("notified")).toBe(notifiedBefore + 5);
      expect(await pins("probed")).toBe(probedBefore);
    }
  });

  it("a head moved without a notification is not seen until one comes; minBlock above the notified head probes", async () => {
    const h = [...new Set(index.events.map((e) => e.blockNumber))].sort((a, b) => (a < b ? -1 : 1)).at(-10)!;
    await commit(h);
    await silently(h + 1n);
    expect((await read(notified, "/stats")).blockNumber).toBe(String(h));
    // A client that knows of h + 1 asks for it: the index is probed, and has it.
    const before = probes;
    const at = await read(notified, `/stats?minBlock=${h + 1n}`);
    expect(at.blockNumber).toBe(String(h + 1n));
    expect(probes).toBe(before + 1);
    expect(ofBlock(at)).toEqual(ofBlock(await read(plain, `/stats?block=${h + 1n}`)));
    // The signal's poll finds the head moved (told without its time): head reads probe until the next notification.
    apps.told.tell(h + 1n);
    await silently(h + 2n);
    expect((await read(notified, "/leaderboards/ve?limit=5")).blockNumber).toBe(String(h + 2n));
    expect(probes).toBe(before + 2);
    const probed = await pins("probed");
    await commit(h + 3n);
    expect((await read(notified, "/leaderboards/ve?limit=5")).blockNumber).toBe(String(h + 3n));
    expect(probes).toBe(before + 2);
    expect(await pins("probed")).toBe(probed);
    expect(probed).toBeGreaterThanOrEqual(2);
  });

  it("an index found below the notified head (a redeploy's views switch) is answered at its head, probed from then on", async () => {
    const h = [...new Set(index.events.map((e) => e.blockNumber))].sort((a, b) => (a < b ? -1 : 1)).at(-4)!;
    await commit(h);
    // The views now name a deployment still catching up, 7 blocks behind, whose trigger is not installed yet.
    await silently(h - 7n);
    // The read pinned to the notified head finds the index below it: read again at the index's head, as probed
    // (it was one 503 "unreachable", a database that does not answer, before).
    const probesBefore = probes;
    const first = await notified.request("/api/index/v1/stats");
    expect(first.status).toBe(200);
    expect(((await first.json()) as { blockNumber: string }).blockNumber).toBe(String(h - 7n));
    expect(probes).toBe(probesBefore + 1);
    // The next head reads probe (the index's head now), within the notification's freshness (3 s).
    const before = probes;
    for (const path of ["/stats", "/leaderboards/ve?limit=5"]) {
      const answer = await read(notified, path);
      expect(answer.blockNumber, path).toBe(String(h - 7n));
      expect(ofBlock(answer), path).toEqual(
        ofBlock(await read(plain, `${path}${path.includes("?") ? "&" : "?"}block=${h - 7n}`)),
      );
    }
    expect(probes).toBe(before + 2);
    // A notification again: pinned to it, no probe.
    await commit(h - 6n);
    expect((await read(notified, "/stats")).blockNumber).toBe(String(h - 6n));
    expect(probes).toBe(before + 2);
  });

  it("a minBlock waiter released by its block's notification is pinned to it: no probe, before or after the wait", async () => {
    const h = [...new Set(index.events.map((e) => e.blockNumber))].sort((a, b) => (a < b ? -1 : 1)).at(-2)!;
    await commit(h);
    expect((await read(notified, "/stats")).blockNumber).toBe(String(h));
    const before = probes;
    const [notifiedBefore, probedBefore] = [await pins("notified"), await pins("probed")];
    for (const [b, path] of [
      [h + 1n, "/stats"],
      [h + 2n, "/leaderboards/ve?limit=5"],
    ] as const) {
      const waiting = read(notified, `${path}${path.includes("?") ? "&" : "?"}minBlock=${b}&waitMs=5000`);
      await new Promise((r) => setTimeout(r, 50));
      await commit(b);
      const answer = await waiting;
      expect(answer.blockNumber, path).toBe(String(b));
      expect(ofBlock(answer), path).toEqual(
        ofBlock(await read(plain, `${path}${path.includes("?") ? "&" : "?"}block=${b}`)),
      );
    }
    expect(probes, "no probe of the head").toBe(before);
    expect(await pins("notified")).toBe(notifiedBefore + 2);
    expect(await pins("probed")).toBe(probedBefore);
  });
});
