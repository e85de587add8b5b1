/**
 * The one error handler (app.onError): an ApiError becomes its envelope and status (api/http/errors.ts), a
 * ProtocolAnswerError its own body (GraphQL's); anything
 * else is 500 INTERNAL_ERROR, its cause logged (scrubbed of URL secrets and addresses), never sent. A body its client
 * abandoned, and a read its request's deadline or hang-up cancelled (the deadline's documented error), are debug lines:
 * nothing failed on our side — but only the cancellation itself (isCancellation), never an error that came after it.
 */
import type { ErrorHandler } from "hono";
import type { Logger } from "../observability/logger";
import { causeOf } from "../observability/throttle";
import { isCancellation } from "./cancellation";
import { edgeHeaders, edgeRequestId } from "./edge";
import type { AppEnv } from "./env";
import { ApiError, BodyAbandonedError, InternalError, ProtocolAnswerError, UnauthorizedError } from "./errors";

export function answerError(logger: Logger): ErrorHandler<AppEnv> {
  return (error, c) => {
    if (error instanceof ProtocolAnswerError) {
      for (const [k, v] of Object.entries(edgeHeaders(c))) c.header(k, v);
      c.header("cache-control", "no-store");
      return c.body(error.body, error.status, { "content-type": error.contentType });
    }
    // A read its request's own signal cancelled (an index statement at the deadline, or after a hang-up) rejects with its
    // cancellation: the route's documented error for a passed deadline, not a 500 (nobody reads it after a hang-up).
    // Only the cancellation itself: another error thrown once the signal fired is a failure, answered and logged below.
    const timedOut = c.get("deadlineError");
    if (timedOut && isCancellation(error, c.get("cancelSignal"))) {
      logger.debug("request cancelled", { requestId: edgeRequestId(c), cause: causeOf(error) });
      const answer = timedOut();
      if (answer instanceof ProtocolAnswerError) return answerError(logger)(answer, c);
      error = answer;
    }
    const apiError = error instanceof ApiError ? error : new InternalError();
    if (!(error instanceof ApiError))
      logger.error("unhandled error", { requestId: edgeRequestId(c), error, stack: error.stack });
    else if (error instanceof BodyAbandonedError)
      logger.debug("request body abandoned", { requestId: edgeRequestId(c), cause: causeOf(error.cause) });
    for (const [k, v] of Object.entries(edgeHeaders(c))) c.header(k, v);
    c.header("cache-control", "no-store");
    if ("retryAfterSec" in apiError) c.header("retry-after", String(apiError.retryAfterSec));
    if (apiError instanceof UnauthorizedError) c.header("www-authenticate", apiError.challenge);
    return c.json(apiError.toEnvelope(), apiError.status);
  };
}
