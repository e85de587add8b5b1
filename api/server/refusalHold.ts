/**
 * A connection refused twice in a row that asks again before the second refusal's Retry-After has passed has that
 * request held until then (plus up to half the Retry-After again, at random; at most HOLD_MAX_MS), then served:
 * nginx's `limit_req` delays excess requests the same way. The refusals are the 429s of the rate limit and the 503s
 * of a busy server (a full computation lane, the compile queue, an upstream back-off); each costs little, but a
 * client that ignores Retry-After and asks again at once on a keep-alive connection makes the process answer
 * thousands a second — 400 addresses asking for past blocks made 3,300 refusals a second, and another client's
 * `/health` waited behind them (p99 94 ms, idle 1.8 ms). A held request costs a timer until then: no route, no rate
 * limit, no answer, and a client waiting for its answer sends nothing more on that connection. (It is parsed: Node's
 * parser reads the socket in C++, so pausing the socket would not hold it.) The random part spreads a flood's
 * connections, refused together, so they do not all come back in the same instant.
 *
 * A refusal is a 429 or 503 that says when to come back (Retry-After): a 503 without it (`/ready` while the process is
 * not ready, which a load balancer polls on one connection) is a state, not a refusal, and is never held. A client
 * that honours Retry-After is never held either, and one that asks for something else after a first refusal (the
 * head after a busy past block) is served at once; one answer that is not a refusal clears the count.
 */
import type { RequestListener, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Counter } from "../observability/counter";

/** The longest a request is held, whatever Retry-After said (a 60 s rate-limit window included). */
export const HOLD_MAX_MS = 5_000;

const REFUSED = Symbol("refusedInARow");
const RETRY_AT = Symbol("retryAt");
const SPREAD = Symbol("spread");
type Tracked = Socket & { [REFUSED]?: number; [RETRY_AT]?: number; [SPREAD]?: number };
const ASKED_ON = Symbol("askedOn");
type Answering = ServerResponse & { [ASKED_ON]?: Tracked };

/** `next`, with a request that comes back early after two refusals in a row on its connection held (see above). */
export function holdRefused(next: RequestListener, held?: Counter): RequestListener {
  const serve: RequestListener = (req, res) => {
    // The socket as the request came (by 'finish' an answer that cut its body short, a 413, has none left), kept on
    // the response for one shared listener: no closure per request.
    const socket = req.socket as Tracked | null;
    if (socket) {
      (res as Answering)[ASKED_ON] = socket;
      res.on("finish", answered);
    }
    next(req, res);
  };
  return (req, res) => {
    const socket = req.socket as Tracked;
    const early = (socket[REFUSED] ?? 0) >= 2 ? socket[RETRY_AT]! - performance.now() : 0;
    if (early <= 0) {
      serve(req, res);
      return;
    }
    held?.inc();
    const wait = Math.min(HOLD_MAX_MS, early + Math.random() * socket[SPREAD]!);
    setTimeout(() => {
      if (!res.destroyed && !socket.destroyed) serve(req, res);
    }, wait).unref();
  };
}

function answered(this: Answering): void {
  afterAnswer(this[ASKED_ON]!, this);
}

function afterAnswer(socket: Tracked, res: ServerResponse): void {
  const after = res.statusCode === 429 || res.statusCode === 503 ? retryAfterMs(res) : undefined;
  if (after === undefined) {
    socket[REFUSED] = 0;
    return;
  }
  socket[REFUSED] = (socket[REFUSED] ?? 0) + 1;
  socket[RETRY_AT] = performance.now() + Math.min(HOLD_MAX_MS, after);
  socket[SPREAD] = Math.min(HOLD_MAX_MS, after) / 2;
}

/**
 * The answer's Retry-After in ms. Answers written with writeHead(status, headers) alone keep their headers only in
 * the header block Node wrote (`_header`), not where getHeader looks.
 */
function retryAfterMs(res: ServerResponse): number | undefined {
  const set = res.getHeader("retry-after");
  const text =
    set !== undefined
      ? String(set)
      : /\r\nretry-after: *(\d+)/i.exec((res as ServerResponse & { _header?: string | null })._header ?? "")?.[1];
  const seconds = Number(text);
  return text === undefined || !Number.isFinite(seconds) ? undefined : seconds * 1000;
}
