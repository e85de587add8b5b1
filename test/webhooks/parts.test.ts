/**
 * The webhooks' parts on their own: the topic strings onto the stream's registry, the target rules (addresses and
 * URLs), the signature against the Standard Webhooks spec's own example, and the outbox on real Postgres — one
 * feeder per block under the cursor, per-subscriber order and no double claim between two workers.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../api/http/errors";
import { sign } from "../../api/webhooks/signature";
import { pgSql, type Sql } from "../../api/webhooks/sql";
import { WebhookStore } from "../../api/webhooks/store";
import { addressClass, allowedAddress, checkTarget, parseTargetUrl } from "../../api/webhooks/target";
import { parseWebhookTopic, parseWebhookTopics } from "../../api/webhooks/topics";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

const param = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return ((error as ApiError).detail as { param: string }).param;
  }
  throw new Error("did not throw");
};

describe("topic strings", () => {
  it("map onto the stream's topics, keyed as the stream keys them", () => {
    expect(parseWebhookTopic("lock:42").path).toBe("/locks/42");
    // A token id past uint256, as GET /locks/{tokenId} refuses it.
    expect(() => parseWebhookTopic(`lock:${2n ** 256n}`)).toThrow(/uint256/);
    expect(parseWebhookTopic("stats").key).toBe("stats");
    expect(parseWebhookTopic("board:ve").path).toBe("/leaderboards/ve");
    const account = parseWebhookTopic("account:0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
    expect(account.key).toBe("account:0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
    expect(account.path).toBe("/accounts/0x70997970C51812dc3A010C7d01b50e0d17dc79C8/locks");
  });

  it("refuse what the stream refuses, a window on a kind without one, and too many; fold duplicates", () => {
    for (const bad of [
      "",
      "lock",
      "lock:x",
      "lock:01",
      "account:0x12",
      "board:pool",
      "board:ve:7d",
      "stats:1",
      // A colon names a value: an empty one is malformed, not the kind without one.
      "stats:",
      "activity:",
      "board:",
      "lock:",
      "x:1",
      7,
    ]) {
      expect(
        param(() => parseWebhookTopic(bad)),
        String(bad),
      ).toBe("topics");
    }
    expect(param(() => parseWebhookTopics([]))).toBe("topics");
    expect(param(() => parseWebhookTopics("stats"))).toBe("topics");
    expect(param(() => parseWebhookTopics(Array.from({ length: 33 }, (_, i) => `lock:${i}`)))).toBe("topics");
    // Too many topics is no one topic's fault: the detail names the bound, not a count posing as a topic.
    let tooMany: unknown = null;
    try {
      parseWebhookTopics(Array.from({ length: 33 }, (_, i) => `lock:${i}`));
    } catch (error) {
      tooMany = error;
    }
    expect((tooMany as ApiError).detail).toEqual({ param: "topics", max: 32 });
    expect(parseWebhookTopics(["lock:1", "lock:1", "stats"]).texts).toEqual(["lock:1", "stats"]);
  });
});

describe("targets", () => {
  it("classify addresses: loopback, private (every non-public range) and public", () => {
    for (const ip of ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"])
      expect(addressClass(ip), ip).toBe("loopback");
    for (const ip of [
      "10.0.0.1",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "fd00::1",
      "fe80::1",
      "224.0.0.1",
      "::",
      "::ffff:10.0.0.1",
      // Documentation ranges, IPv4-compatible, Teredo and 6to4 (which embed an IPv4 address).
      "192.0.2.1",
      "198.51.100.1",
      "203.0.113.1",
      "2001:db8::1",
      "::a00:1",
      "2001:0:a00:1::",
      "2002:a00:1::",
    ]) {
      expect(addressClass(ip), ip).toBe("private");
    }
    // Special-purpose ranges (IANA's registries), each at its first, inner and last address.
    const special: [range: string, addresses: string[]][] = [
      ["fec0::/10 site-local", ["fec0::", "fec0::1", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"]],
      ["192.88.99.0/24 6to4 relay anycast", ["192.88.99.0", "192.88.99.1", "192.88.99.255"]],
      [
        "::ffff:0:0:0/96 IPv4-translated",
        ["::ffff:0:0:0", "::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe", "::ffff:0:ffff:ffff"],
      ],
      ["2001:10::/28 ORCHID", ["2001:10::", "2001:10::1", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff"]],
      ["2001:20::/28 ORCHIDv2", ["2001:20::", "2001:20::1", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff"]],
      ["2001::/23 IETF protocol assignments", ["2001:2::1", "2001:3::1", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff"]],
      ["3fff::/20 documentation", ["3fff::1", "3fff:fff::1"]],
      ["5f00::/16 SRv6 SIDs", ["5f00::1"]],
      // NAT64 (RFC 6052, RFC 8215): the well-known prefix and the local-use one, through which a gateway reaches the
      // IPv4 address embedded (169.254.169.254 here) — both refused whole, as they carry no host of their own.
      ["64:ff9b::/96 NAT64 well-known", ["64:ff9b::", "64:ff9b::a9fe:a9fe", "64:ff9b::101:101"]],
      [
        "64:ff9b:1::/48 NAT64 local-use",
        ["64:ff9b:1::", "64:ff9b:1::a9fe:a9fe", "64:ff9b:1:a9fe:a9fe::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff"],
      ],
    ];
    for (const [range, addresses] of special) {
      for (const ip of addresses) {
        expect(addressClass(ip), `${range}: ${ip}`).toBe("private");
        expect(allowedAddress(ip, "none"), `${range}: ${ip}`).toBe(false);
        expect(allowedAddress(ip, "loopback"), `${range}: ${ip}`).toBe(false);
      }
    }
    // Their neighbours are public.
    for (const ip of [
      "192.88.98.255",
      "192.88.100.0",
      "::fffe:0:7f00:1",
      "2001:200::1",
      "3ffe:ffff::1",
      "4000::1",
      "5f01::1",
      "64:ff9b:0:0:1::",
      "64:ff9b:2::1",
    ])
      expect(addressClass(ip), ip).toBe("public");
    for (const ip of [
      "1.1.1.1",
      "8.8.8.8",
      "2606:4700:4700::1111",
      "172.32.0.1",
      "203.0.114.1",
      "2001:4860:4860::8888",
    ])
      expect(addressClass(ip), ip).toBe("public");
    expect(allowedAddress("127.0.0.1", "none")).toBe(false);
    expect(allowedAddress("127.0.0.1", "loopback")).toBe(true);
    expect(allowedAddress("10.0.0.1", "loopback")).toBe(false);
    expect(allowedAddress("10.0.0.1", "all")).toBe(true);
  });

  it("accept http(s) URLs without credentials; judge the host's addresses (localhost resolves to loopback)", async () => {
    for (const bad of [
      "ftp://x.example/",
      "nope",
      "http://u:p@x.example/",
      "javascript:alert(1)",
      1,
      "x".repeat(2001),
      // Port 0 is no port a receiver listens on: never deliverable.
      "http://1.1.1.1:0/",
      "https://x.example:00/",
    ]) {
      expect(
        param(() => parseTargetUrl(bad)),
        String(bad),
      ).toBe("url");
    }
    await expect(checkTarget(new URL("http://localhost:9/x"), "none")).rejects.toThrow(/loopback/);
    await expect(checkTarget(new URL("http://localhost:9/x"), "loopback")).resolves.toBeUndefined();
    await expect(checkTarget(new URL("http://[::ffff:a00:1]/x"), "loopback")).rejects.toThrow(/private/);
    await expect(checkTarget(new URL("http://no-such-host.invalid/x"), "all")).rejects.toThrow(/does not resolve/);
  });
});

describe("signature", () => {
  it("matches the Standard Webhooks spec's example", () => {
    // github.com/standard-webhooks/standard-webhooks, the reference libraries' test vector.
    expect(
      sign(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });
});

describe("the outbox on Postgres", () => {
  const schema = `wh_test_${process.pid}_${Date.now()}`;
  let sql: Sql;
  let store: WebhookStore;

  /** Two blocks after the outbox's cursor, one `stats` delivery each for `subscription`. */
  const feedTwoBlocks = (subscription: string) =>
    store.feed(async (cursor) => ({
      to: cursor! + 2n,
      rows: [1n, 2n].map((i) => ({
        subscription,
        block: cursor! + i,
        topic: "stats",
        type: "index.stats",
        payload: "{}",
      })),
    }));

  beforeAll(async () => {
    sql = pgSql(PG_URL, 6);
    store = new WebhookStore(sql, schema);
    // Two processes starting together both create the tables: neither fails.
    await Promise.all([store.migrate(), new WebhookStore(sql, schema).migrate()]);
  });

  afterAll(async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await c.end();
    await sql.close();
  });

  it("one feeder per block: two concurrent feeds of one head insert once", async () => {
    const hook = (await store.create("http://127.0.0.1:9/x", ["stats"], "whsec_AAAA", 10))!;
    await store.feed(async () => ({ to: 10n, rows: [] }));
    const feedTo = (head: bigint) =>
      store.feed(async (cursor) => {
        if (cursor === null || cursor >= head) return null;
        await new Promise((r) => setTimeout(r, 100));
        const rows = [];
        for (let b = cursor + 1n; b <= head; b++) {
          rows.push({ subscription: hook.id, block: b, topic: "stats", type: "index.stats", payload: `{"b":${b}}` });
        }
        return { to: head, rows };
      });
    const added = await Promise.all([feedTo(13n), feedTo(13n)]);
    expect(added.sort()).toEqual([0, 3]);
    const listed = await store.deliveries({ webhook: hook.id, limit: 10 });
    expect(listed.map((d) => d.blockNumber)).toEqual(["13", "12", "11"]);
  });

  it("two workers claim each subscriber's oldest pending delivery only, never the same one", async () => {
    const hooks = await Promise.all([1, 2, 3].map((i) => store.create(`http://127.0.0.1:9/${i}`, ["stats"], "s", 10)));
    await store.feed(async (cursor) => ({
      to: cursor! + 5n,
      rows: hooks.flatMap((h) =>
        [1n, 2n, 3n, 4n, 5n].map((i) => ({
          subscription: h!.id,
          block: cursor! + i,
          topic: "stats",
          type: "index.stats",
          payload: `{"b":${cursor! + i}}`,
        })),
      ),
    }));
    const delivered: Record<string, string[]> = {};
    const worker = async () => {
      for (let round = 0; round < 50; round++) {
        const claimed = await store.claim({ first: 8, retries: 8 }, 60_000);
        if (claimed.length === 0) {
          await new Promise((r) => setTimeout(r, 10));
          continue;
        }
        // Never two of one subscriber in one claim.
        expect(new Set(claimed.map((c) => c.url)).size).toBe(claimed.length);
        for (const c of claimed) {
          await new Promise((r) => setTimeout(r, 5));
          expect(await store.delivered(c.seq, c.attempts)).toBe(true);
          delivered[c.url] = [...(delivered[c.url] ?? []), c.payload];
        }
      }
    };
    await Promise.all([worker(), worker()]);
    const first = Number(JSON.parse(delivered["http://127.0.0.1:9/1"]![0]!).b);
    for (const h of hooks) {
      expect(delivered[h!.url]!.map((p) => Number(JSON.parse(p).b))).toEqual([0, 1, 2, 3, 4].map((i) => first + i));
    }
  });

  it("a delivery orphaned in flight holds its webhook until the attempt ends, or its lease; one backing off goes at once", async () => {
    /** A reorg from `from`, as the feeder feeds one: the orphans' reverts. */
    const reorgFrom = (from: bigint) =>
      store.feed(async (cursor, _reorgTo, tx) => {
        const orphans = await store.orphan(tx, from);
        const rows = orphans.map((o) => ({
          subscription: o.subscription,
          block: o.block,
          topic: o.topic,
          type: "index.reverted",
          payload: `{"reverts":"${o.id}"}`,
        }));
        return { to: cursor!, rows };
      });
    const claimOf = async (url: string, leaseMs = 60_000) =>
      (await store.claim({ first: 100, retries: 100 }, leaseMs)).filter((x) => x.url === url);
    const statuses = async (hook: string) =>
      (await store.deliveries({ webhook: hook, limit: 10 })).map((d) => `${d.type}:${d.status}`).reverse();

    // In flight, then acknowledged: the revert waits for it, and it is listed delivered.
    const acked = (await store.create("http://127.0.0.1:9/inflight", ["stats"], "s", 10))!;
    await feedTwoBlocks(acked.id);
    const [c] = await claimOf(acked.url);
    const from = BigInt((await store.deliveries({ webhook: acked.id, limit: 10 })).at(-1)!.blockNumber);
    await reorgFrom(from);
    expect(await claimOf(acked.url)).toEqual([]);
    expect(await store.delivered(c!.seq, c!.attempts)).toBe(true);
    expect(await statuses(acked.id)).toEqual([
      "index.stats:delivered",
      "index.stats:cancelled",
      "index.reverted:pending",
    ]);
    expect((await claimOf(acked.url)).map((x) => x.payload)).toEqual([`{"reverts":"${c!.id}"}`]);

    // In flight on a worker that died: let go (cancelled, never retried) when its lease ends.
    const died = (await store.create("http://127.0.0.1:9/died", ["stats"], "s", 10))!;
    await feedTwoBlocks(died.id);
    const [d] = await claimOf(died.url, 300);
    await reorgFrom(BigInt((await store.deliveries({ webhook: died.id, limit: 10 })).at(-1)!.blockNumber));
    expect(await claimOf(died.url)).toEqual([]);
    await new Promise((r) => setTimeout(r, 400));
    expect((await claimOf(died.url)).map((x) => x.payload)).toEqual([`{"reverts":"${d!.id}"}`]);
    expect(await statuses(died.id)).toEqual([
      "index.stats:cancelled",
      "index.stats:cancelled",
      "index.reverted:pending",
    ]);

    // Backing off (its attempt over): cancelled at once, its revert claimed at once.
    const waiting = (await store.create("http://127.0.0.1:9/waiting", ["stats"], "s", 10))!;
    await feedTwoBlocks(waiting.id);
    const [w] = await claimOf(waiting.url);
    await store.failed(w!.seq, w!.attempts, "HTTP 500", 60_000);
    await reorgFrom(BigInt((await store.deliveries({ webhook: waiting.id, limit: 10 })).at(-1)!.blockNumber));
    expect((await claimOf(waiting.url)).map((x) => x.payload)).toEqual([`{"reverts":"${w!.id}"}`]);
  });

  it("a failure past the schedule kills the delivery and those behind it; a replay brings them back in order", async () => {
    const hook = (await store.create("http://127.0.0.1:9/dead", ["stats"], "s", 10))!;
    await feedTwoBlocks(hook.id);
    const [c] = (await store.claim({ first: 100, retries: 100 }, 60_000)).filter((x) => x.url === hook.url);
    await store.failed(c!.seq, c!.attempts, "HTTP 500", null);
    const dead = await store.deliveries({ webhook: hook.id, status: "dead", limit: 10 });
    expect(dead.map((d) => d.lastError)).toEqual(["an earlier delivery of its webhook went dead", "HTTP 500"]);
    expect(await store.replay(hook.id)).toBe(2);
    const again = (await store.claim({ first: 100, retries: 100 }, 60_000)).filter((x) => x.url === hook.url);
    expect(again.map((x) => x.seq)).toEqual([c!.seq]);
  });

  it("blocks fed after a delivery went dead wait dead behind it, and a replay sends them all in block order", async () => {
    const hook = (await store.create("http://127.0.0.1:9/order", ["stats"], "s", 10))!;
    const feedBlocks = (n: bigint[]) =>
      store.feed(async (cursor) => ({
        to: cursor! + BigInt(n.length),
        rows: n.map((block) => ({
          subscription: hook.id,
          block,
          topic: "stats",
          type: "index.stats",
          payload: `{"b":${block}}`,
        })),
      }));
    const mine = async () =>
      (await store.claim({ first: 100, retries: 100 }, 60_000)).filter((x) => x.url === hook.url);
    await feedBlocks([100n, 101n]);
    const [first] = await mine();
    await store.failed(first!.seq, first!.attempts, "HTTP 500", null);

    // Fed after the death: queued dead behind it, not sent ahead of it.
    await feedBlocks([102n]);
    expect(await mine()).toEqual([]);
    const listed = await store.deliveries({ webhook: hook.id, limit: 10 });
    expect(listed.map((d) => [d.blockNumber, d.status])).toEqual([
      ["102", "dead"],
      ["101", "dead"],
      ["100", "dead"],
    ]);
    // One fed in the instant the delivery died (pending, behind the dead ones) waits too.
    await feedBlocks([103n]);
    await sql.query(`UPDATE "${schema}".delivery SET status = 'pending' WHERE subscription_id = $1 AND block = 103`, [
      hook.id,
    ]);
    expect(await mine()).toEqual([]);

    expect(await store.replay(hook.id)).toBe(3);
    const sent: number[] = [];
    for (let round = 0; round < 10; round++) {
      const claimed = await mine();
      if (claimed.length === 0) break;
      expect(claimed).toHaveLength(1);
      sent.push(JSON.parse(claimed[0]!.payload).b);
      await store.delivered(claimed[0]!.seq, claimed[0]!.attempts);
    }
    expect(sent).toEqual([100, 101, 102, 103]);
  });

  it("deleting a webhook deletes all its deliveries, delivered ones included (as the docs say)", async () => {
    const hook = (await store.create("http://127.0.0.1:9/deleted", ["stats"], "s", 10))!;
    await feedTwoBlocks(hook.id);
    const [c] = (await store.claim({ first: 100, retries: 100 }, 60_000)).filter((x) => x.url === hook.url);
    expect(await store.delivered(c!.seq, c!.attempts)).toBe(true);
    expect((await store.deliveries({ webhook: hook.id, limit: 10 })).map((d) => d.status)).toEqual([
      "pending",
      "delivered",
    ]);
    expect(await store.remove(hook.id)).toBe(true);
    expect(await store.deliveries({ webhook: hook.id, limit: 10 })).toEqual([]);
  });
});

describe("WEBHOOK_MAX on Postgres", () => {
  const schema = `wh_max_test_${process.pid}_${Date.now()}`;
  let sql: Sql;

  beforeAll(async () => {
    sql = pgSql(PG_URL, 10);
    await new WebhookStore(sql, schema).migrate();
  });

  afterAll(async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await c.end();
    await sql.close();
  });

  it("holds under concurrent registrations: 40 at once on 10 connections (two replicas' stores) store exactly the max", async () => {
    // Two stores on one schema, as two API processes are.
    const stores = [new WebhookStore(sql, schema), new WebhookStore(pgSql(PG_URL, 10), schema)];
    try {
      const created = await Promise.all(
        Array.from({ length: 40 }, (_, i) => stores[i % 2]!.create(`http://127.0.0.1:9/${i}`, ["stats"], "s", 5)),
      );
      expect(created.filter((c) => c !== null)).toHaveLength(5);
      expect(await stores[0]!.list()).toHaveLength(5);
      // Full stays full; one removed makes room for one.
      expect(await stores[1]!.create("http://127.0.0.1:9/late", ["stats"], "s", 5)).toBeNull();
      expect(await stores[0]!.remove(created.find((c) => c !== null)!.id)).toBe(true);
      const again = await Promise.all(
        [0, 1, 2].map((i) => stores[i % 2]!.create(`http://127.0.0.1:9/r${i}`, ["stats"], "s", 5)),
      );
      expect(again.filter((c) => c !== null)).toHaveLength(1);
      expect(await stores[1]!.list()).toHaveLength(5);
    } finally {
      await stores[1]!.sql.close();
    }
  });
});
