import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { createLockIndex } from "../../api/locks/atBlock";
import { silentLogger } from "../../api/observability/logger";
import { generateSyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";

it("scratch", async () => {
  const index = generateSyntheticIndex({ events: 500, owners: 20, seed: 11, startBlock: 46_183_959n });
  const client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), "synthetic", index, { finalizedLag: 50n });
  const app = createApp({
    config: loadConfig({ NETWORK: "base" }),
    rpc: null,
    lockIndex: createLockIndex({ db: drizzle(client), schema: "synthetic" }),
    logger: silentLogger,
  });
  const owner = index.events[0]!.account;
  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const res = await app.request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    console.log(res.status, res.headers.get("content-type"), (await res.text()).slice(0, 600));
  };
  await post({
    query: `{ _meta { block blockTimestamp chainId head } lock(tokenId: "1") { tokenId owner veWei } locks(where: {owner: "${owner}"}, limit: 2) { items { tokenId } pageInfo { hasNextPage endCursor } } lockEvents(where: {account: "${owner}"}, limit: 2) { items { kind blockNumber logIndex } pageInfo { hasNextPage endCursor } } }`,
  });
  await post({ query: "{ lock(" });
  await post({ query: "{ nope }" });
  await post({ query: "{ nope }" }, { accept: "application/graphql-response+json" });
  await post({ query: `{ lockEvents(where: {tokenId: "1"}, limit: 1001) { items { kind } } }` });
  await post({
    query: `{ a: lockEvents(where: {tokenId: "1"}, limit: 1000) { items { kind } } b: lockEvents(where: {tokenId: "1"}, limit: 1000) { items { kind } } c: lock(tokenId: "1") { tokenId } }`,
  });
  await post({
    query: `{ __type(name: "Lock") { fields { type { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } }`,
  });
  await post({ query: `mutation { x }` });
  await post({ query: `{ lock(tokenId: "1", block: "5") { tokenId } }` });
  await post({ query: `{ lock(tokenId: "-1") { tokenId } }` });
  const r = await app.request(`/graphql?query=${encodeURIComponent("{ _meta { block } }")}`);
  console.log(r.status, await r.text());
  const r2 = await app.request(`/graphql?query=${encodeURIComponent("mutation { x }")}`);
  console.log(r2.status, await r2.text());
  const r3 = await app.request(`/graphql`, { method: "PUT" });
  console.log(r3.status, await r3.text());
  const r4 = await app.request(`/graphql`, { method: "POST", body: "x", headers: { "content-type": "text/plain" } });
  console.log(r4.status, await r4.text());
  const r5 = await app.request(`/graphql`);
  console.log(r5.status, await r5.text());
  const { getIntrospectionQuery } = await import("graphql");
  await post({ query: getIntrospectionQuery() });
});
