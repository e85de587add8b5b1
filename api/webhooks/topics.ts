/**
 * A webhook's topics as strings, `kind:value[:window]` — `lock:42`, `account:0x…`, `board:ve`, `board:<key>:<window>`,
 * `stats`, `activity`, `activity:<kind>` — onto the stream's registry (api/live/topics.ts TOPIC_KINDS): the same
 * topics, the same answers, the same judgement of which indexed events change them. A kind the registry lacks in this
 * build is refused (400), so a kind added there (a duration board's window, the activity feed) works here unchanged.
 */
import { ApiError, BadParamsError } from "../http/errors";
import { TOPIC_KINDS, type Topic } from "../live/topics";

/** Most topics one webhook may follow (as a stream: api/live/topics.ts MAX_TOPICS). */
export const MAX_WEBHOOK_TOPICS = 32;

const bad = (message: string, topic: unknown): never => {
  throw new BadParamsError(message, { param: "topics", topic });
};

/** One topic string; a bad one is a 400 naming it. */
export function parseWebhookTopic(text: unknown): Topic {
  if (typeof text !== "string" || text.length === 0 || text.length > 200) {
    return bad("Each topic must be a string such as lock:42, account:0x…, board:ve or stats.", text);
  }
  // Everything after the kind is the topic's value, as the stream's parameter takes it (`takeovers:24h`: a board and
  // its window; `takeover,unlock`: activity kinds).
  const cut = text.indexOf(":");
  const kindName = cut === -1 ? text : text.slice(0, cut);
  const value = cut === -1 ? "" : text.slice(cut + 1);
  const kind = Object.hasOwn(TOPIC_KINDS, kindName) ? TOPIC_KINDS[kindName] : undefined;
  // `kind:` names a value and gives none: not the kind without one (`stats:` is not `stats`, `activity:` not every kind).
  if (kind && cut !== -1 && value === "") {
    return bad(`Topic "${text}": its colon is followed by no value.`, text);
  }
  if (!kind) {
    return bad(
      `Unknown topic "${text}": topics are ${Object.keys(TOPIC_KINDS).join(", ")} (kind:value[:window]).`,
      text,
    );
  }
  try {
    return kind.parse(value);
  } catch (error) {
    // The registry speaks of query parameters; here the topic string is what was wrong.
    if (error instanceof ApiError) return bad(`Topic "${text}": ${error.message}`, text);
    throw error;
  }
}

/** A registration's `topics`: a non-empty array, each valid, duplicates folded (by the topic's key). */
export function parseWebhookTopics(value: unknown): { texts: string[]; topics: Topic[] } {
  if (!Array.isArray(value) || value.length === 0) {
    return bad("topics must be a non-empty array of topic strings (lock:42, account:0x…, board:ve, stats).", value);
  }
  if (value.length > MAX_WEBHOOK_TOPICS) {
    // `detail.topic` names a topic string everywhere else; here no one topic is wrong.
    throw new BadParamsError(`At most ${MAX_WEBHOOK_TOPICS} topics per webhook; ${value.length} given.`, {
      param: "topics",
      max: MAX_WEBHOOK_TOPICS,
    });
  }
  const byKey = new Map<string, { text: string; topic: Topic }>();
  for (const text of value) {
    const topic = parseWebhookTopic(text);
    if (!byKey.has(topic.key)) byKey.set(topic.key, { text: text as string, topic });
  }
  const kept = [...byKey.values()];
  return { texts: kept.map((k) => k.text), topics: kept.map((k) => k.topic) };
}
