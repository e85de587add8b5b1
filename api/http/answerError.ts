/**
 * The one error handler (app.onError): an ApiError becomes its envelope and status (api/http/errors.ts); anything
 * else is 500 INTERNAL_ERROR, its cause logged (scrubbed of URL secrets and addresses), never sent.
 */
import type { ErrorHandler } from "hono";
import type { Logger } from "../observability/logger";
import { edgeHeaders, edgeRequestId } from "./edge";
import type { AppEnv } from "./env";
import { ApiError, InternalError, UnauthorizedError } from "./errors";

export function answerError(logger: Logger): ErrorHandler<AppEnv> {
  return (error, c) => {
    const apiError = error instanceof ApiError ? error : new InternalError();
    if (!(error instanceof ApiError))
      logger.error("unhandled error", { requestId: edgeRequestId(c), error, stack: error.stack });
    for (const [k, v] of Object.entries(edgeHeaders(c))) c.header(k, v);
    c.header("cache-control", "no-store");
    if ("retryAfterSec" in apiError) c.header("retry-after", String(apiError.retryAfterSec));
    if (apiError instanceof UnauthorizedError) c.header("www-authenticate", apiError.challenge);
    return c.json(apiError.toEnvelope(), apiError.status);
  };
}
