/**
 * GraphQL against the chain (issue 23, 6 and 9), in-process: a real Ponder index of a seeded devnet (PGlite, or
 * Postgres when DATABASE_URL is set) and the app over it (test/support/indexChain.ts), compared with the chain at
 * `_meta.block` by test/support/graphqlChain.ts. test/graphql/servedChain.test.ts runs the same comparison through
 * the processes users run.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import {
  expectGraphqlLocksMatchChain,
  expectLockEventPagesHoldBlock,
  type GraphqlPost,
  graphqlPost,
} from "../support/graphqlChain";
import { type IndexChain, startIndexChain } from "../support/indexChain";
import { ACTORS, applyLockOps, lockOpArb } from "../support/lockChain";

const backend = process.env.DATABASE_URL ? "postgres" : "pglite";

describe(`GraphQL against the chain (${backend})`, () => {
  let chain: IndexChain;
  let post: GraphqlPost;

  beforeAll(async () => {
    chain = await startIndexChain();
    post = graphqlPost((p, init) => chain.app.request(p, init));
  }, 180_000);

  afterAll(() => chain?.stop());

  it("after the seed (merges, unlocks, a sell-back, listings, AutoMax): every lock as the chain has it", async () => {
    await expectGraphqlLocksMatchChain(chain.devnet, post);
  });

  it("an account's events page by page hold their block while blocks are mined and indexed between pages", async () => {
    await expectLockEventPagesHoldBlock(post, {
      account: DEVNET_ACCOUNTS.alice.address,
      between: async (page) => {
        await applyLockOps(chain.devnet, fc.sample(lockOpArb, { numRuns: 4, seed: page }));
        await chain.catchUp();
      },
    });
  });

  it("after random activity by every actor: still every lock as the chain has it at the answer's block", async () => {
    expect(ACTORS.length).toBeGreaterThan(1);
    await applyLockOps(chain.devnet, fc.sample(lockOpArb, { numRuns: 10, seed: 42 }));
    await chain.catchUp();
    await expectGraphqlLocksMatchChain(chain.devnet, post);
  });
});
