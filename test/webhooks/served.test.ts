/**
 * Webhooks through the served processes, as production runs them: the seeded devnet, ONE indexer (`ponder start` on
 * Postgres, views schema `s`) and TWO API processes sharing one outbox. What is proven on the wire: the operator's
 * token guards every route (401); bad registrations are 400 (URL, private target, topic); a lock created on the devnet
 * reaches its account's webhook at its block with the REST answer there, signed as Standard Webhooks says (checked
 * here with the spec's own recipe, not the service's code); a receiver down then up gets every delivery afterwards in
 * block order with none acknowledged twice, a retry carrying the same webhook-id; the two processes never double a
 * delivery; a delivery failing past its schedule is dead, listed, and replayed; a 3-block reorg (evm_snapshot /
 * evm_revert) sends `index.reverted` for what was delivered from the orphaned block, then the new head's answer,
 * equal to the chain.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import Ajv2020 from "ajv/dist/2020.js";
import { type Address, getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../../api/openapi/document";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import type { SeededChain } from "../support/indexChain";
import { type LiveTopology, lockViaFurnace } from "../support/liveTopology";
import { headBlock, readChainLocks } from "../support/lockChain";
import { openApiValidator } from "../support/openApiValidator";
import type { ServiceChild } from "../support/replica";
import { type Received, WebhookReceiver } from "../support/webhookReceiver";
import { registerWebhook, startWebhookTopology, WEBHOOK_OPERATOR_TOKEN } from "../support/webhookTopology";

const BASE = "/api/index/v1";
const TOKEN = WEBHOOK_OPERATOR_TOKEN;
/** Retries after 0.3 s … 2 s: 8.8 s in all before a delivery is dead. */
const SCHEDULE = "0.3,0.5,1,1,2,2,2";

let chain: SeededChain;
let topology: LiveTopology;
let a: ServiceChild;
let b: ServiceChild;

const receivers: WebhookReceiver[] = [];

type Payload = {
  type: string;
  timestamp: string;
  data: { topic: string; blockNumber: string; answer?: unknown; revertedId?: string; head?: string };
};

const auth = { authorization: `Bearer ${TOKEN}` };

async function api(base: ServiceChild, method: string, path: string, body?: unknown, headers = auth) {
  const res = await fetch(`${base.url}${BASE}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}

const register = (receiver: WebhookReceiver, topics: string[], on = a) => registerWebhook(on, receiver, topics);

async function receiver(): Promise<WebhookReceiver> {
  const r = new WebhookReceiver();
  await r.up();
  receivers.push(r);
  return r;
}

/** Standard Webhooks' verification, written from the spec: HMAC-SHA256 of "id.timestamp.body" under the secret's bytes. */
function verifies(secret: string, r: Received): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${r.id}.${r.timestamp}.${r.body}`).digest();
  return r.signature.split(" ").some((part) => {
    const [version, sig] = part.split(",");
    const given = Buffer.from(sig ?? "", "base64");
    return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

const parsed = (r: Received) => JSON.parse(r.body) as Payload;

/** Every delivery received is what the OpenAPI document's `webhooks` say, headers and body. */
async function matchesDocument(received: Received[]): Promise<void> {
  const doc = await buildOpenApiDocument();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  type Documented = {
    post: {
      parameters: { name: string; schema: { pattern: string } }[];
      requestBody: { content: { "application/json": { schema: object } } };
    };
  };
  const hooks = doc.webhooks as Record<"index-event" | "index-reverted", Documented>;
  const event = ajv.compile(hooks["index-event"].post.requestBody.content["application/json"].schema);
  const reverted = ajv.compile(hooks["index-reverted"].post.requestBody.content["application/json"].schema);
  const header = (name: string) =>
    new RegExp(hooks["index-event"].post.parameters.find((p) => p.name === name)!.schema.pattern);
  expect(received.length).toBeGreaterThan(0);
  for (const r of received) {
    const body = JSON.parse(r.body) as Payload;
    const validate = body.type === "index.reverted" ? reverted : event;
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    expect(r.id).toMatch(header("webhook-id"));
    expect(r.timestamp).toMatch(header("webhook-timestamp"));
    expect(r.signature).toMatch(header("webhook-signature"));
  }
}

const create = (who: (typeof DEVNET_ACCOUNTS)["alice"], amount: bigint) => lockViaFurnace(chain, who, amount);

async function restAt(path: string, block: string): Promise<unknown> {
  const res = await fetch(`${a.url}${BASE}${path}${path.includes("?") ? "&" : "?"}block=${block}`);
  expect(res.status, path).toBe(200);
  return res.json();
}

beforeAll(async () => {
  topology = await startWebhookTopology({
    apis: 2,
    env: { WEBHOOK_RETRY_SCHEDULE: SCHEDULE, WEBHOOK_TIMEOUT_MS: "2000" },
  });
  chain = topology.chain;
  [a, b] = topology.apis as [ServiceChild, ServiceChild];
}, 240_000);

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.down()));
  await topology?.stop();
});

describe("webhooks on the API processes", () => {
  it("every route asks for the operator's token: 401 UNAUTHORIZED with a Bearer challenge", async () => {
    const routes = [
      ["POST", "/webhooks", { url: "http://127.0.0.1:1/x", topics: ["stats"] }],
      ["GET", "/webhooks", undefined],
      ["GET", "/webhooks/deliveries", undefined],
      ["DELETE", "/webhooks/wh_x", undefined],
      ["POST", "/webhooks/wh_x/replay", undefined],
    ] as const;
    for (const headers of [{}, { authorization: "Bearer wrong-token-0123456789" }, { authorization: TOKEN }]) {
      for (const [method, path, body] of routes) {
        const res = await api(a, method, path, body, headers as typeof auth);
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.json.error).toBe("UNAUTHORIZED");
        expect(res.headers.get("www-authenticate")).toBe('Bearer realm="webhooks"');
      }
    }
    const list = await api(b, "GET", "/webhooks");
    expect(list.status).toBe(200);
    expect(list.headers.get("cache-control")).toBe("no-store");
  });

  it("bad registrations are 400 BAD_PARAMS naming what is wrong; unknown webhooks are 404", async () => {
    const ok = ["stats"];
    for (const [body, param] of [
      ["{not json", "body"],
      [[], "body"],
      [{ url: "ftp://127.0.0.1/x", topics: ok }, "url"],
      [{ url: "not a url", topics: ok }, "url"],
      [{ url: "http://user:pw@127.0.0.1/x", topics: ok }, "url"],
      [{ url: "http://10.1.2.3/x", topics: ok }, "url"],
      [{ url: "http://[fd00::1]/x", topics: ok }, "url"],
      [{ url: "http://169.254.169.254/latest", topics: ok }, "url"],
      [{ url: "http://127.0.0.1:9/x", topics: [] }, "topics"],
      [{ url: "http://127.0.0.1:9/x", topics: ["lock:abc"] }, "topics"],
      [{ url: "http://127.0.0.1:9/x", topics: ["account:0x12"] }, "topics"],
      [{ url: "http://127.0.0.1:9/x", topics: ["board:pool"] }, "topics"],
      [{ url: "http://127.0.0.1:9/x", topics: ["board:ve:7d"] }, "topics"],
      [{ url: "http://127.0.0.1:9/x", topics: ["nope:1"] }, "topics"],
      [{ url: "http://127.0.0.1:9/x", topics: [42] }, "topics"],
      // A member the server does not read is refused (the OpenAPI body has additionalProperties: false), not ignored.
      [{ url: "http://127.0.0.1:9/x", topics: ok, foo: 1 }, "foo"],
      [{ url: "http://127.0.0.1:9/x", topic: ok }, "topic"],
      [{ url: "http://127.0.0.1:9/x", topics: ok, secret: "whsec_mine" }, "secret"],
      [JSON.parse('{"url":"http://127.0.0.1:9/x","topics":["stats"],"__proto__":{}}'), "__proto__"],
    ] as const) {
      const res = await api(a, "POST", "/webhooks", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error).toBe("BAD_PARAMS");
      expect((res.json.detail as { param: string }).param, JSON.stringify(body)).toBe(param);
    }
    for (const [method, path] of [
      ["DELETE", "/webhooks/wh_none"],
      ["POST", "/webhooks/wh_none/replay"],
    ] as const) {
      const res = await api(a, method, path);
      expect(res.status).toBe(404);
      expect(res.json.error).toBe("NOT_FOUND");
    }
    const res = await api(a, "GET", "/webhooks/deliveries?status=lost");
    expect(res.status).toBe(400);
    // Unknown and repeated parameters are refused, as on every other route.
    for (const [query, param] of [
      ["foo=1", "foo"],
      ["limit=1&limit=2", "limit"],
    ] as const) {
      const refused = await api(a, "GET", `/webhooks/deliveries?${query}`);
      expect(refused.status).toBe(400);
      expect(refused.json.error).toBe("BAD_PARAMS");
      expect((refused.json.detail as { param: string }).param).toBe(param);
    }
  });

  it("the operator routes answer as the OpenAPI document says, errors included", async () => {
    const doc = await buildOpenApiDocument();
    const { check } = openApiValidator(doc);
    const matches = (method: string, template: string, res: { status: number; json: unknown }) => {
      const item = doc.paths[`${BASE}${template}`] as Record<string, { responses: Record<string, unknown> }>;
      const documented = item[method.toLowerCase()]?.responses[String(res.status)] as
        | { content: { "application/json": { schema: unknown } } }
        | undefined;
      expect(documented, `${method} ${template} documents ${res.status}`).toBeDefined();
      expect(check(documented!.content["application/json"].schema, res.json), `${method} ${template}`).toBeNull();
    };
    const r = await receiver();
    const created = await api(a, "POST", "/webhooks", { url: r.url, topics: ["stats", "board:takeovers:24h"] });
    matches("POST", "/webhooks", created);
    const id = (created.json.webhook as { id: string }).id;
    matches("GET", "/webhooks", await api(a, "GET", "/webhooks"));
    matches("GET", "/webhooks/deliveries", await api(a, "GET", `/webhooks/deliveries?webhook=${id}&limit=5`));
    matches("POST", "/webhooks/{id}/replay", await api(a, "POST", `/webhooks/${id}/replay`));
    matches("POST", "/webhooks", await api(a, "POST", "/webhooks", { url: "ftp://x", topics: ["stats"] }));
    matches(
      "GET",
      "/webhooks",
      await api(a, "GET", "/webhooks", undefined, { authorization: "Bearer not-the-operator-token" }),
    );
    matches("DELETE", "/webhooks/{id}", await api(a, "DELETE", "/webhooks/wh_none"));
    matches("DELETE", "/webhooks/{id}", await api(a, "DELETE", `/webhooks/${id}`));
  });

  it("a lock reaches its account's webhook at its block, signed, with the REST answer there; other blocks send nothing", async () => {
    const r = await receiver();
    const carol = getAddress(DEVNET_ACCOUNTS.carol.address);
    const hook = await register(r, [`account:${carol}`]);
    // A topic whose key differs from its string (`activity:` with no kinds): deliveries name it as registered.
    const feed2 = await receiver();
    const activityHook = await register(feed2, ["activity"]);
    expect(hook.id).toMatch(/^wh_/);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(hook.secret.slice(6), "base64").length).toBeGreaterThanOrEqual(24);
    await create(DEVNET_ACCOUNTS.alice, 1_000n);
    await create(DEVNET_ACCOUNTS.carol, 2_000n);
    const block = (await headBlock(chain.devnet)).toString();
    const got = await r.until((acked) => acked.find((x) => parsed(x).data.blockNumber === block));
    expect(got.id).toMatch(/^msg_/);
    expect(verifies(hook.secret, got)).toBe(true);
    expect(verifies(hook.secret, { ...got, body: got.body.replace("account", "acc0unt") })).toBe(false);
    expect(Math.abs(Number(got.timestamp) - Date.now() / 1000)).toBeLessThan(60);
    const body = parsed(got);
    expect(body.type).toBe("index.account");
    // Named as registered (checksummed here), not by the topic's lower-cased key: a receiver routes by its own string.
    expect(body.data.topic).toBe(`account:${carol}`);
    const activityDelivery = await feed2.until((acked) => acked.find((x) => parsed(x).data.blockNumber === block));
    expect(parsed(activityDelivery).data.topic).toBe("activity");
    // Its locks' REST answer at the block, with the block's activity concerning carol.
    const { activity, ...locksAnswer } = body.data.answer as { activity: { kind: string; blockNumber: string }[] };
    expect(locksAnswer).toEqual(await restAt(`/accounts/${carol}/locks`, block));
    const feed = (await restAt(`/activity?account=${carol}`, block)) as { events: { blockNumber: string }[] };
    expect(activity).toEqual(feed.events.filter((e) => e.blockNumber === block));
    expect(activity.map((e) => e.kind)).toContain("create");
    // Alice's block did not concern carol.
    await new Promise((res) => setTimeout(res, 500));
    expect(r.acked().map((x) => parsed(x).data.blockNumber)).toEqual([block]);
    const list = await api(b, "GET", "/webhooks");
    const listed = (list.json.webhooks as { id: string; secret?: string; topics: string[] }[]).find(
      (w) => w.id === hook.id,
    );
    expect(listed?.topics).toEqual([`account:${carol}`]);
    expect(listed?.secret).toBeUndefined();
    expect((await api(a, "DELETE", `/webhooks/${hook.id}`)).status).toBe(200);
    expect((await api(a, "DELETE", `/webhooks/${activityHook.id}`)).status).toBe(200);
  });

  it("a receiver down, then up, gets every delivery afterwards in block order, none acknowledged twice; a retry keeps its id", async () => {
    const r = await receiver();
    const hook = await register(r, ["stats"], b);
    r.failNext = 1;
    await create(DEVNET_ACCOUNTS.bob, 1_100n);
    const first = (await headBlock(chain.devnet)).toString();
    await r.until((acked) => acked.some((x) => parsed(x).data.blockNumber === first));
    // The failed attempt and the acknowledged retry are one delivery: one webhook-id.
    const attempts = r.received.filter((x) => parsed(x).data.blockNumber === first);
    expect(attempts.map((x) => x.acked)).toEqual([false, true]);
    expect(attempts[0]!.id).toBe(attempts[1]!.id);
    await r.down();
    const blocks: string[] = [];
    for (const amount of [1_200n, 1_300n, 1_400n]) {
      await create(DEVNET_ACCOUNTS.bob, amount);
      blocks.push((await headBlock(chain.devnet)).toString());
    }
    await new Promise((res) => setTimeout(res, 3_000));
    await r.up();
    await r.until((acked) => acked.some((x) => parsed(x).data.blockNumber === blocks[2]), 30_000);
    const acked = r.acked().map((x) => ({ id: x.id, block: parsed(x).data.blockNumber }));
    expect(acked.map((x) => x.block)).toEqual([first, ...blocks]);
    expect(new Set(acked.map((x) => x.id)).size).toBe(acked.length);
    for (const x of r.acked()) expect(verifies(hook.secret, x)).toBe(true);
    await matchesDocument(r.received);
    // Each answer is the REST answer at its block.
    expect(parsed(r.acked()[2]!).data.answer).toEqual(await restAt("/stats", blocks[1]!));
    const delivered = await api(a, "GET", `/webhooks/deliveries?webhook=${hook.id}&status=delivered`);
    expect((delivered.json.deliveries as unknown[]).length).toBe(4);
    expect((await api(a, "DELETE", `/webhooks/${hook.id}`)).status).toBe(200);
  }, 60_000);

  it("two API processes feed and work one outbox: each block's delivery is made once, by one of them", async () => {
    const r = await receiver();
    await register(r, ["stats"], a);
    const blocks: string[] = [];
    for (const amount of [1_500n, 1_600n, 1_700n, 1_800n]) {
      await create(DEVNET_ACCOUNTS.carol, amount);
      blocks.push((await headBlock(chain.devnet)).toString());
    }
    await r.until((acked) => acked.some((x) => parsed(x).data.blockNumber === blocks[3]));
    await new Promise((res) => setTimeout(res, 1_500));
    expect(r.received.map((x) => parsed(x).data.blockNumber)).toEqual(blocks);
    expect(new Set(r.received.map((x) => x.id)).size).toBe(blocks.length);
    const [ma, mb] = await Promise.all([a, b].map(async (p) => (await fetch(`${p.url}/api/metrics`)).text()));
    const delivered = (m: string) =>
      Number(/api_webhook_attempts_total\{outcome="delivered"\} (\d+)/.exec(m)?.[1] ?? 0);
    expect(delivered(ma!) + delivered(mb!)).toBeGreaterThanOrEqual(blocks.length);
    expect(ma).toMatch(/api_webhook_pending \d+/);
    expect(ma).toMatch(/api_webhook_oldest_pending_seconds \d+/);
  });

  it("a delivery failing past its schedule is dead, listed, and sent again in order by a replay", async () => {
    const r = await receiver();
    r.failing = true;
    const hook = await register(r, ["stats"]);
    await create(DEVNET_ACCOUNTS.alice, 1_900n);
    const b1 = (await headBlock(chain.devnet)).toString();
    await create(DEVNET_ACCOUNTS.alice, 1_950n);
    const b2 = (await headBlock(chain.devnet)).toString();
    let dead: { id: string; blockNumber: string; attempts: number; lastError: string }[] = [];
    for (let i = 0; i < 100 && dead.length < 2; i++) {
      await new Promise((res) => setTimeout(res, 300));
      const res = await api(b, "GET", `/webhooks/deliveries?status=dead&webhook=${hook.id}`);
      dead = res.json.deliveries as typeof dead;
    }
    expect(dead.map((d) => d.blockNumber).sort()).toEqual([b1, b2].sort());
    const head = dead.find((d) => d.blockNumber === b1)!;
    expect(head.attempts).toBe(SCHEDULE.split(",").length + 1);
    expect(head.lastError).toBe("HTTP 500");
    // Only the oldest was attempted: the second waited behind it, then died with it.
    expect(new Set(r.received.map((x) => x.id)).size).toBe(1);
    const listed = (await api(a, "GET", "/webhooks")).json.webhooks as { id: string; dead: number }[];
    expect(listed.find((w) => w.id === hook.id)?.dead).toBe(2);
    r.failing = false;
    const replay = await api(a, "POST", `/webhooks/${hook.id}/replay`);
    expect(replay.json).toEqual({ ok: true, webhook: hook.id, replayed: 2 });
    await r.until((acked) => acked.length === 2);
    expect(r.acked().map((x) => parsed(x).data.blockNumber)).toEqual([b1, b2]);
    expect(r.acked()[0]!.id).toBe(r.received[0]!.id);
    expect((await api(a, "DELETE", `/webhooks/${hook.id}`)).status).toBe(200);
  }, 60_000);

  it("a 3-block reorg sends index.reverted for what was delivered from the orphaned block, then the new head's answer, equal to the chain", async () => {
    const { testClient } = chain.devnet.clients;
    const r = await receiver();
    const alice = getAddress(DEVNET_ACCOUNTS.alice.address);
    const hook = await register(r, [`account:${alice}`]);
    // The fork is a block without rows of ours (as test/index/stream.test.ts: Ponder may revert from the fork itself).
    await testClient.mine({ blocks: 1 });
    const snapshot = await testClient.snapshot();
    await create(DEVNET_ACCOUNTS.alice, 3_000n);
    const orphan = (await headBlock(chain.devnet)).toString();
    await testClient.mine({ blocks: 2 });
    const delivered = await r.until((acked) => acked.find((x) => parsed(x).data.blockNumber === orphan));
    await testClient.revert({ id: snapshot });
    // The new branch outgrows the old head (as test/index/stream.test.ts): Ponder's revert is heard whether it
    // commits the short branch first or the new one past the old head in one step.
    await create(DEVNET_ACCOUNTS.carol, 1_700n);
    await testClient.mine({ blocks: 4 });
    // A CI run saw none in 60 s, and the next case's block was not fed either: what the indexer and the API processes
    // logged then says which of them stopped.
    const reverted = await r
      .until((acked) => acked.find((x) => parsed(x).type === "index.reverted"), 60_000)
      .catch((error: Error) => {
        const tail = (p: ServiceChild) => p.log().slice(-3_000);
        throw new Error(
          `${error.message}\nindexer: ${tail(topology.indexer)}\napi a: ${tail(a)}\napi b: ${tail(b)}`.slice(0, 12_000),
        );
      });
    const body = parsed(reverted);
    expect(body.data.revertedId).toBe(delivered.id);
    expect(body.data.blockNumber).toBe(orphan);
    expect(body.data.topic).toBe(`account:${alice}`);
    expect(reverted.id).not.toBe(delivered.id);
    expect(verifies(hook.secret, reverted)).toBe(true);
    // Then the topic's answer at the new head the reorg landed on.
    const after = await r.until((acked) => {
      const at = acked.indexOf(reverted);
      return acked.slice(at + 1).find((x) => parsed(x).type === "index.account");
    });
    const afterBody = parsed(after);
    expect(afterBody.data.blockNumber).toBe(body.data.head);
    const sent = (afterBody.data.answer as { locks: { tokenId: string }[] }).locks.map((l) => BigInt(l.tokenId));
    const onChain = (await readChainLocks(chain.devnet, BigInt(afterBody.data.blockNumber))).locks
      .filter((l) => l.owner === (alice as Address) && l.amount > 0n)
      .map((l) => l.tokenId)
      .sort((x, y) => (x < y ? -1 : 1));
    expect(sent).toEqual(onChain);
    // One reorg, one revert of the delivery; nothing acknowledged twice, here either; every delivery (the reverted one
    // too) as the OpenAPI document says.
    expect(r.acked().filter((x) => parsed(x).type === "index.reverted")).toHaveLength(1);
    expect(new Set(r.acked().map((x) => x.id)).size).toBe(r.acked().length);
    await matchesDocument(r.received);
  }, 90_000);

  it("a restart loses nothing: deliveries pending when both processes stop are made by the next one, once", async () => {
    const r = await receiver();
    await register(r, ["stats"]);
    await r.down();
    await create(DEVNET_ACCOUNTS.carol, 1_234n);
    const block = (await headBlock(chain.devnet)).toString();
    // Fed (the answer at the block is in the outbox) and attempted at least once while the receiver is away.
    let attempted = false;
    for (let i = 0; i < 100 && !attempted; i++) {
      const res = await api(a, "GET", "/webhooks/deliveries?status=pending");
      const pending = res.json.deliveries as { blockNumber: string; attempts: number }[];
      attempted = pending.some((d) => d.blockNumber === block && d.attempts > 0);
      if (!attempted) await new Promise((res) => setTimeout(res, 100));
    }
    expect(attempted).toBe(true);
    // One crashes, the other stops; a new process comes up on the same outbox.
    await a.stop("SIGKILL");
    await b.stop();
    const c = await topology.spawnApi();
    await c.waitFor200("/ready", 60_000);
    await r.up();
    await r.until((acked) => acked.some((x) => parsed(x).data.blockNumber === block));
    await new Promise((res) => setTimeout(res, 1_000));
    expect(r.acked().map((x) => parsed(x).data.blockNumber)).toEqual([block]);
  }, 120_000);
});
