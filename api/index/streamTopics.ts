/**
 * The topics a stream may follow (GET /api/index/v1/stream?lock=42&account=0x…&board=ve&stats), a small registry:
 * each names the REST route whose answer it sends and which indexed events change that answer. A new board (or an
 * activity feed) plugs in as one more entry. A change is an indexed event in the block that alters the answer; time
 * alone (ve decaying) is not, since every answer names its block.
 */
import { getAddress } from "viem";
import { BadParamsError } from "../http/errors";
import type { BlockChange } from "../read/contract";

export type Topic = {
  /** `lock:42`, `account:0x…`, `board:ve`, `stats`: unique per stream, and the answers' memo key. */
  key: string;
  /** The SSE event name: the topic's kind. */
  event: string;
  /** The REST route (under /api/index/v1) whose answer at a block is the event's data; `?block=` is appended. */
  path: string;
  /** Whether an event of the block alters the answer. */
  concerns(change: BlockChange): boolean;
};

type TopicKind = { description: string; parse(value: string): Topic };

const fail = (name: string, message: string): never => {
  throw new BadParamsError(`Query parameter "${name}" ${message}.`, { param: name });
};

export const TOPIC_KINDS: Readonly<Record<string, TopicKind>> = {
  lock: {
    description: "A lock's id: its answer of GET /locks/{tokenId} in each block with an event of that lock.",
    parse(value) {
      if (!/^(0|[1-9]\d{0,77})$/.test(value)) fail("lock", "must be a token id (a decimal integer)");
      const id = BigInt(value);
      return {
        key: `lock:${id}`,
        event: "lock",
        path: `/locks/${id}`,
        concerns: (c) => c.tokenIds.includes(id),
      };
    },
  },
  account: {
    description:
      "An address: its answer of GET /accounts/{address}/locks in each block with an event it sent, received or owns.",
    parse(value) {
      if (!/^0x[0-9a-fA-F]{40}$/.test(value)) fail("account", "must be an address (0x + 40 hex)");
      let address: string;
      try {
        address = getAddress(value);
      } catch {
        return fail("account", "has a bad EIP-55 checksum");
      }
      const lower = address.toLowerCase();
      return {
        key: `account:${lower}`,
        event: "account",
        path: `/accounts/${address}/locks`,
        concerns: (c) => c.accounts.some((a) => a.toLowerCase() === lower),
      };
    },
  },
  board: {
    description: "`ve`: the first page of GET /leaderboards/ve in each block with any lock event.",
    parse(value) {
      if (value !== "ve") fail("board", "must be ve (the boards this process serves)");
      return { key: "board:ve", event: "board", path: "/leaderboards/ve", concerns: () => true };
    },
  },
  stats: {
    description: "No value: GET /stats in each block with any lock event.",
    parse(value) {
      if (value !== "") fail("stats", "takes no value");
      return { key: "stats", event: "stats", path: "/stats", concerns: () => true };
    },
  },
};

/** Most topics one stream may follow. */
export const MAX_TOPICS = 32;

/** The stream's topics from its query; a bad one is a 400 before the stream opens. */
export function parseTopics(url: string): Topic[] {
  const params = new URL(url).searchParams;
  const topics = new Map<string, Topic>();
  for (const [name, value] of params) {
    const kind = Object.hasOwn(TOPIC_KINDS, name) ? TOPIC_KINDS[name] : undefined;
    if (!kind) {
      throw new BadParamsError(
        `Unknown query parameter "${name}": a stream's topics are ${Object.keys(TOPIC_KINDS).join(", ")}.`,
        { param: name },
      );
    }
    const topic = kind.parse(value);
    topics.set(topic.key, topic);
  }
  if (topics.size === 0) {
    throw new BadParamsError(`Name at least one topic: ${Object.keys(TOPIC_KINDS).join(", ")}.`, { param: "topic" });
  }
  if (topics.size > MAX_TOPICS) {
    throw new BadParamsError(`At most ${MAX_TOPICS} topics per stream.`, { param: "topic" });
  }
  return [...topics.values()];
}
