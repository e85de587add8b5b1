/**
 * The query parameters of the index routes, declared once: the handlers parse with them (api/http/params.ts) and
 * the OpenAPI document and MCP tools are generated from them.
 */
import type { ParamDoc } from "../http/params";
import { MIN_BLOCK_PARAM, WAIT_MS_PARAM } from "../read/atLeast";

export const BLOCK_PARAM = {
  kind: "uint256",
  description:
    "Answer as of this block: any block from the lock contract's start block to the index's head (400 outside). " +
    "Default: the index's head.",
} as const satisfies ParamDoc;

/** What every index route takes to choose its block: `block`, and `minBlock` with `waitMs` (api/read/atLeast.ts). */
export const AT_PARAMS = {
  block: BLOCK_PARAM,
  minBlock: MIN_BLOCK_PARAM,
  waitMs: WAIT_MS_PARAM,
} as const satisfies Readonly<Record<string, ParamDoc>>;

export const PAGE_PARAMS = {
  ...AT_PARAMS,
  limit: { kind: "uint256", min: 1n, max: 1000n, default: "100", description: "Rows per page, 1 to 1000." },
  cursor: {
    kind: "cursor",
    description:
      "The `nextCursor` of the previous page. The page is answered at the block of the first page, whatever the " +
      "index did since, so no row is seen twice or missed; `block`, if also given, must equal it.",
  },
} as const satisfies Readonly<Record<string, ParamDoc>>;

export const ADDRESS_PATH = {
  kind: "address",
  required: true,
  description: "The account.",
} as const satisfies ParamDoc;
export const TOKEN_ID_PATH = {
  kind: "uint256",
  required: true,
  description: "The lock's token id.",
} as const satisfies ParamDoc;
