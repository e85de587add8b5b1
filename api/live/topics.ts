/**
 * The topics a stream (GET /api/index/v1/stream?lock=42&account=0x…&board=ve&board=takeovers&stats&activity
 * &kind=takeover) or a webhook (api/webhooks/topics.ts: `lock:42`, `board:takeovers:24h`) may follow, a small
 * registry: each names the REST route whose answer it sends and which indexed changes alter that answer. A change is
 * an indexed event in the block that alters the answer, or for a windowed duration board an entry leaving its window;
 * time alone (ve decaying) is not, since every answer names its block. Two query parameters qualify topics rather
 * than name one: `window` (the duration boards') and `kind` (activity's); a topic's value may carry its own instead
 * (`board=takeovers:24h`, `activity=takeover,royalty-claim`). It lives in api/live, below the stream (api/index) and
 * the webhooks (api/webhooks), so both follow the same topics and neither imports the other.
 */
import { getAddress } from "viem";
import { BadParamsError } from "../http/errors";
import {
  type BlockChange,
  BOARD_WINDOWS,
  type BoardWindow,
  DURATION_BOARDS,
  type DurationBoard,
} from "../read/contract";
import { ACTIVITY_KINDS } from "../read/shapes";

export type Topic = {
  /** `lock:42`, `account:0x…`, `board:ve`, `stats`: unique per stream, and the answers' memo key. */
  key: string;
  /** The SSE event name: the topic's kind. */
  event: string;
  /** The REST route (under /api/index/v1, with its query if any) whose answer at a block is the event's data; `block=` is added. */
  path: string;
  /** Whether a change of the block alters the answer. */
  concerns(change: BlockChange): boolean;
  /** Whether board exits alter the answer (a windowed duration board): the hub then asks the index for them. */
  exits?: boolean;
  /** An account's topic: its data also carries the block's activity concerning it (api/live/topicAnswer.ts). */
  activityOf?: string;
};

/** The parameters that qualify topics (`window=`, `kind=`), when the stream's query gives them. */
export type TopicQualifiers = { window?: string; kind?: string };

type TopicKind = { description: string; parse(value: string, qualifiers?: TopicQualifiers): Topic };

/** The activity kind whose events feed each duration board (indexer/boards.ts boardEntries). */
const BOARD_SOURCE: Record<DurationBoard, (typeof ACTIVITY_KINDS)[number]> = {
  "king-claim-mined": "reign-finalized",
  "longest-reign": "reign-finalized",
  takeovers: "takeover",
  "takeover-eth": "takeover",
  royalties: "royalty-claim",
  "furnace-claim": "furnace-enter",
  "furnace-eth": "furnace-enter",
};
const DURATION = new Set<string>(DURATION_BOARDS);
const KINDS = new Set<string>(ACTIVITY_KINDS);

const MAX_UINT256 = 2n ** 256n - 1n;

const fail = (name: string, message: string): never => {
  throw new BadParamsError(`Query parameter "${name}" ${message}.`, { param: name });
};

export const TOPIC_KINDS: Readonly<Record<string, TopicKind>> = {
  lock: {
    description: "A lock's id: its answer of GET /locks/{tokenId} in each block with an event of that lock.",
    parse(value) {
      if (!/^(0|[1-9]\d{0,77})$/.test(value)) fail("lock", "must be a token id (a decimal integer)");
      const id = BigInt(value);
      // As GET /locks/{tokenId} refuses it: an id no token can have is a subscription that never fires.
      if (id > MAX_UINT256) fail("lock", "exceeds the uint256 range");
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
      "An address: its answer of GET /accounts/{address}/locks, with `activity` (that block's items of GET " +
      "/activity?account=), in each block with an event that concerns it (a lock event it sent, received or owns; a " +
      "Furnace, royalty or MineCore event naming it).",
    parse(value) {
      if (!/^0x[0-9a-fA-F]{40}$/.test(value)) fail("account", "must be an address (0x + 40 hex)");
      // getAddress checksums any 40 hex digits (it throws on none of them): a mixed-case address must be its own checksum.
      const address = getAddress(value);
      const body = value.slice(2);
      const mixed = body !== body.toLowerCase() && body !== body.toUpperCase();
      if (mixed && address !== value) return fail("account", "has a bad EIP-55 checksum");
      const lower = address.toLowerCase();
      return {
        key: `account:${lower}`,
        event: "account",
        path: `/accounts/${address}/locks`,
        activityOf: address,
        concerns: (c) => c.accounts.some((a) => a.toLowerCase() === lower),
      };
    },
  },
  board: {
    description:
      "`ve`: the first page of GET /leaderboards/ve in each block with a lock event; a duration board " +
      "(`takeovers`, `takeovers:24h`; the window from `window=`, default 7d): the first page of " +
      "GET /leaderboards/{board}?window= in each block with an event of the board's source kind or in which an " +
      "entry leaves the window.",
    parse(value, qualifiers) {
      const cut = value.indexOf(":");
      const key = cut === -1 ? value : value.slice(0, cut);
      const own = cut === -1 ? undefined : value.slice(cut + 1);
      if (key === "ve") {
        if (own !== undefined) fail("board", "ve takes no window");
        return { key: "board:ve", event: "board", path: "/leaderboards/ve", concerns: (c) => c.lock };
      }
      if (!DURATION.has(key)) fail("board", `must be ve or a duration board (${DURATION_BOARDS.join(", ")})`);
      const window = own ?? qualifiers?.window ?? "7d";
      if (!Object.hasOwn(BOARD_WINDOWS, window)) {
        fail(own === undefined ? "window" : "board", "must name a window: 24h, 7d, 30d or lifetime");
      }
      const board = key as DurationBoard;
      const source = BOARD_SOURCE[board];
      return {
        key: `board:${board}:${window}`,
        event: "board",
        path: `/leaderboards/${board}?window=${window}`,
        concerns: (c) => c.kind === source || (c.exit !== null && c.exit.board === board && c.exit.window === window),
        exits: BOARD_WINDOWS[window as BoardWindow] !== null,
      };
    },
  },
  activity: {
    description:
      "No value, or kinds comma-separated (`activity=takeover,unlock`; else from `kind=`): the first page of " +
      "GET /activity?kind= in each block with an event of those kinds (all kinds when none is named).",
    parse(value, qualifiers) {
      const list = value !== "" ? value : (qualifiers?.kind ?? "");
      const name = value !== "" ? "activity" : "kind";
      // Sorted: one topic (one memo key, one read per block) however a client orders or repeats its kinds.
      const kinds = list === "" ? null : [...new Set(list.split(","))].sort();
      const unknown = kinds?.find((k) => !KINDS.has(k));
      if (unknown !== undefined) {
        throw new BadParamsError(`kind ${unknown} is not an activity kind.`, { param: name, accepted: ACTIVITY_KINDS });
      }
      const query = kinds === null ? "" : `?kind=${kinds.join(",")}`;
      return {
        key: `activity:${kinds?.join(",") ?? ""}`,
        event: "activity",
        path: `/activity${query}`,
        concerns: (c) => c.kind !== null && (kinds === null || kinds.includes(c.kind)),
      };
    },
  },
  stats: {
    description: "No value: GET /stats in each block with any lock event.",
    parse(value) {
      if (value !== "") fail("stats", "takes no value");
      return { key: "stats", event: "stats", path: "/stats", concerns: (c) => c.lock };
    },
  },
};

/** Most topics one stream may follow. */
export const MAX_TOPICS = 32;

/** The query parameters that qualify topics, and the topic kind each applies to. */
const QUALIFIERS = { window: "board", kind: "activity" } as const;

/** The stream's topics from its query; a bad one is a 400 before the stream opens. */
export function parseTopics(url: string): Topic[] {
  const params = new URL(url).searchParams;
  const qualifiers: TopicQualifiers = {};
  for (const name of Object.keys(QUALIFIERS) as (keyof typeof QUALIFIERS)[]) {
    const values = params.getAll(name);
    if (values.length > 1) fail(name, "may be given once");
    if (values.length === 1) qualifiers[name] = values[0];
  }
  const topics = new Map<string, Topic>();
  for (const [name, value] of params) {
    if (Object.hasOwn(QUALIFIERS, name)) continue;
    const kind = Object.hasOwn(TOPIC_KINDS, name) ? TOPIC_KINDS[name] : undefined;
    if (!kind) {
      throw new BadParamsError(
        `Unknown query parameter "${name}": a stream's topics are ${Object.keys(TOPIC_KINDS).join(", ")}.`,
        { param: name },
      );
    }
    const topic = kind.parse(value, qualifiers);
    topics.set(topic.key, topic);
  }
  // A qualifier nothing uses is a client's mistake (a window for ve, a kind without activity), not silently ignored.
  if (qualifiers.window !== undefined && !params.getAll("board").some((v) => DURATION.has(v))) {
    fail("window", "applies only to a duration board topic whose value names no window (board=takeovers)");
  }
  if (qualifiers.kind !== undefined && !params.getAll("activity").includes("")) {
    fail("kind", "applies only to an activity topic with no value (activity&kind=takeover)");
  }
  if (topics.size === 0) {
    throw new BadParamsError(`Name at least one topic: ${Object.keys(TOPIC_KINDS).join(", ")}.`, { param: "topic" });
  }
  if (topics.size > MAX_TOPICS) {
    throw new BadParamsError(`At most ${MAX_TOPICS} topics per stream.`, { param: "topic" });
  }
  return [...topics.values()];
}
