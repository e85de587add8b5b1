/**
 * A topic's data at a block, as a stream event (api/index/streamHub.ts) and a webhook delivery
 * (api/webhooks/engine.ts) both carry it: its route's answer there. One function for both, so an event and a
 * delivery of the same topic and block are the same JSON.
 */
import type { AnswerFetcher } from "./routeAnswers";
import type { Topic } from "./topics";

/** Activity items of one block concerning an account, at most (a page of the feed at that block). */
const BLOCK_ACTIVITY_LIMIT = 100;

/**
 * A topic's data at `block`: its route's answer there (a lock not minted yet: null). An account's is its locks' answer
 * with `activity`: the feed's items of that very block concerning the address (GET /activity?account=…&block=N,
 * newest first, at most 100), so a client sees what happened, not only the result.
 */
export async function topicAnswer(topic: Topic, fetch: AnswerFetcher, block: bigint): Promise<string | null> {
  const text = await fetch(topicPathAt(topic, block));
  if (text === null || topic.activityOf === undefined) return text;
  const feed = await fetch(`/activity?account=${topic.activityOf}&limit=${BLOCK_ACTIVITY_LIMIT}&block=${block}`);
  const items = feed === null ? [] : (JSON.parse(feed) as { events: { blockNumber: string }[] }).events;
  const activity = items.filter((item) => item.blockNumber === block.toString());
  return JSON.stringify({ ...(JSON.parse(text) as object), activity });
}

/** The topic's route at `block` (its path may carry a query of its own: a board's window, activity kinds). */
export const topicPathAt = (topic: Topic, block: bigint): string =>
  `${topic.path}${topic.path.includes("?") ? "&" : "?"}block=${block}`;
