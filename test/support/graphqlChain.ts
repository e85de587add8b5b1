/**
 * GraphQL against the chain (issue 23, 6 and 9), for any process that serves POST /graphql: the app in-process
 * (test/graphql/chain.test.ts) or the processes users run (test/graphql/servedChain.test.ts). Every lock GraphQL
 * reports is compared with getLockInfo / ownerOf / veOfToken read AT THE BLOCK `_meta.block` names, each owner's
 * `locks` with the chain's owners there, and an account's `lockEvents` pages hold their block while new blocks
 * are mined and indexed between them.
 */
import { type Address, getAddress } from "viem";
import { expect } from "vitest";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import type { TestDevnet } from "./devnet";
import { readChainLocks } from "./lockChain";

export type GraphqlBody = {
  // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field against the chain
  data?: Record<string, any> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
};

/** One GraphQL request, answered as JSON; how it travels (app.request, a socket) is the caller's. */
export type GraphqlPost = (query: string, variables?: Record<string, unknown>) => Promise<GraphqlBody>;

/**
 * POST /graphql through `request`: `(p, init) => app.request(p, init)` in-process, or
 * `(p, init) => fetch(base + p, init)` on a served process. Any status but 200 fails with the body.
 */
export function graphqlPost(request: (path: string, init: RequestInit) => Response | Promise<Response>): GraphqlPost {
  return async (query, variables) => {
    const res = await request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query, variables }),
    });
    const text = await res.text();
    expect(res.status, text.slice(0, 500)).toBe(200);
    return JSON.parse(text) as GraphqlBody;
  };
}

/** The answer's data; an answer with errors fails the test. */
// biome-ignore lint/suspicious/noExplicitAny: see GraphqlBody
export async function graphqlData(post: GraphqlPost, query: string, variables?: Record<string, unknown>): Promise<any> {
  const body = await post(query, variables);
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data!;
}

export interface WaitForBlockOptions {
  timeoutMs?: number;
  /** The processes serving `post` (test/support/replica.ts ServiceChild): one that exits ends the wait at once. */
  processes?: { command: string; running(): boolean; log(): string }[];
}

/**
 * Resolves with `_meta.block` once GraphQL answers at `block` or later: data, not /ready, since a served API can be
 * ready while the index it reads lags. Refused connections and answers with errors (INDEX_UNAVAILABLE before the
 * views exist, say) are waited through. Polls every 200 ms.
 */
export async function waitForGraphqlBlock(
  post: GraphqlPost,
  block: bigint,
  opts: WaitForBlockOptions = {},
): Promise<bigint> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    for (const p of opts.processes ?? []) {
      if (!p.running())
        throw new Error(`${p.command} exited while waiting for block ${block}:\n${p.log().slice(-4000)}`);
    }
    try {
      const body = await post("{ _meta { block } }");
      const at = body.data?._meta?.block;
      if (!body.errors && typeof at === "string" && BigInt(at) >= block) return BigInt(at);
      last = body;
    } catch (error) {
      last = error instanceof Error ? error.message : error;
    }
    if (Date.now() > deadline) {
      const logs = (opts.processes ?? []).map((p) => `--- ${p.command}:\n${p.log().slice(-4000)}`).join("\n");
      throw new Error(
        `GraphQL never answered at block ${block} within ${timeoutMs} ms; last: ${JSON.stringify(last)}\n${logs}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

const veOfToken = (devnet: TestDevnet, tokenId: bigint, blockNumber: bigint) =>
  devnet.clients.publicClient.readContract({
    address: devnet.addresses.VeLockNFT,
    abi: DEVNET_ABIS.VeLockNFT,
    functionName: "veOfToken",
    args: [tokenId],
    blockNumber,
  });

/**
 * Every token ever minted (25 aliases a request, all pinned to the first request's block) and every owner's live
 * `locks` (plus an account without any) against the chain at that block. Returns the block.
 */
export async function expectGraphqlLocksMatchChain(devnet: TestDevnet, post: GraphqlPost): Promise<bigint> {
  const first = await graphqlData(post, "{ _meta { block } }");
  const B = BigInt(first._meta.block);
  const chain = await readChainLocks(devnet, B);
  expect(chain.locks.length).toBeGreaterThan(5);
  for (let i = 0; i < chain.locks.length; i += 25) {
    const batch = chain.locks.slice(i, i + 25);
    const fields = batch
      .map(
        (l) =>
          `t${l.tokenId}: lock(tokenId: "${l.tokenId}", block: $b) { owner amountWei lockEnd autoMax listed burned veWei }`,
      )
      .join(" ");
    const data = await graphqlData(post, `query($b: Block) { _meta(block: $b) { block } ${fields} }`, {
      b: String(B),
    });
    expect(data._meta.block).toBe(String(B));
    for (const l of batch) {
      const got = data[`t${l.tokenId}`];
      const burned = l.owner === null;
      expect(got, `lock ${l.tokenId} at ${B}`).toMatchObject({
        owner: l.owner,
        amountWei: String(l.amount),
        autoMax: burned ? false : l.autoMax,
        listed: chain.listed.has(l.tokenId),
        burned,
      });
      if (!burned) {
        expect(got.lockEnd, `lockEnd of ${l.tokenId}`).toBe(String(chain.effectiveEnds.get(l.tokenId)));
        expect(got.veWei, `ve of ${l.tokenId}`).toBe(String(await veOfToken(devnet, l.tokenId, B)));
      }
    }
  }
  // Each owner's live locks, by token id, as ownerOf says at B.
  const owners = [...new Set(chain.locks.flatMap((l) => (l.owner ? [l.owner] : [])))];
  for (const owner of [...owners, DEVNET_ACCOUNTS.idle.address]) {
    const data = await graphqlData(
      post,
      `query($b: Block) { locks(where: { owner: "${owner}" }, block: $b, limit: 1000) { items { tokenId } } }`,
      { b: String(B) },
    );
    const expected = chain.locks.filter((l) => l.owner === getAddress(owner)).map((l) => String(l.tokenId));
    expect(
      data.locks.items.map((l: { tokenId: string }) => l.tokenId),
      `locks of ${owner}`,
    ).toEqual(expected);
  }
  return B;
}

export interface EventPagesOptions {
  account: Address;
  /**
   * Runs after page `page` (for the first few pages): mines blocks with new lock activity and waits until the
   * process answers at them, so the next page is asked for while the index has moved on.
   */
  between(page: number): Promise<void>;
  /** How many pages `between` runs after (default 3). */
  movingPages?: number;
}

/**
 * `account`'s lockEvents, two a page: every page answers at the first page's block while `between` mines and
 * indexes blocks, no row twice, the pages together are the whole list at that block, and the head has moved on.
 * Returns the pages' block and how many rows they held.
 */
export async function expectLockEventPagesHoldBlock(
  post: GraphqlPost,
  opts: EventPagesOptions,
): Promise<{ block: bigint; rows: number }> {
  const q = `query($after: String) { _meta { block head } lockEvents(where: { account: "${opts.account}" }, limit: 2,
    after: $after) { items { txHash logIndex blockNumber } pageInfo { hasNextPage endCursor } } }`;
  const key = (e: { txHash: string; logIndex: number }) => `${e.txHash}-${e.logIndex}`;
  let data = await graphqlData(post, q);
  const block = data._meta.block as string;
  const rows: string[] = [];
  const moving = opts.movingPages ?? 3;
  let moved = 0;
  for (let page = 0; page < 100; page++) {
    expect(data._meta.block, `page ${page}'s block`).toBe(block);
    rows.push(...data.lockEvents.items.map(key));
    for (const e of data.lockEvents.items) expect(BigInt(e.blockNumber) <= BigInt(block)).toBe(true);
    if (!data.lockEvents.pageInfo.hasNextPage) break;
    if (page < moving) {
      await opts.between(page);
      moved++;
    }
    data = await graphqlData(post, q, { after: data.lockEvents.pageInfo.endCursor });
  }
  expect(new Set(rows).size).toBe(rows.length);
  const all = await graphqlData(
    post,
    `query($b: Block) { lockEvents(where: { account: "${opts.account}" }, block: $b, limit: 1000) { items { txHash logIndex } } }`,
    { b: block },
  );
  expect(rows).toEqual(all.lockEvents.items.map(key));
  expect(moved, "pages asked for after new blocks were indexed").toBe(moving);
  const fresh = await graphqlData(post, "{ _meta { block head } }");
  expect(BigInt(fresh._meta.block) > BigInt(block), "the head moved on while the pages held their block").toBe(true);
  return { block: BigInt(block), rows: rows.length };
}
