/**
 * Reading a request body no further than a route's limit (the MCP endpoint, POST /graphql). A body its client abandoned
 * (hung up before its end) is BodyAbandonedError.
 */
import type { AppContext } from "./env";
import { BodyAbandonedError } from "./errors";

/**
 * The request's body as text, or null when it is larger than `max` bytes (read no further than that). Served by
 * @hono/node-server, the body is read from Node's IncomingMessage itself: building the web Request's
 * ReadableStream over it costs more than the rest of a small request's parsing. In process (app.request), from
 * the Request.
 */
export async function readBoundedBody(c: AppContext, max: number): Promise<string | null> {
  const incoming = c.env?.incoming;
  if (incoming === undefined || incoming.readableDidRead) return readBounded(c.req.raw, max);
  const declared = Number(incoming.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of incoming as AsyncIterable<Buffer>) {
      size += chunk.byteLength;
      // Leaving the loop destroys the stream: nothing more of it is read.
      if (size > max) return null;
      chunks.push(chunk);
    }
  } catch (error) {
    // The stream fails only when its connection does: the client hung up mid-body ("aborted").
    throw new BodyAbandonedError({ cause: error });
  }
  return Buffer.concat(chunks, size).toString("utf8");
}

/** The body as text, or null when it is larger than `max` bytes (read no further than that). */
export async function readBounded(request: Request, max: number): Promise<string | null> {
  return (await readBoundedBytes(request, max))?.toString("utf8") ?? null;
}

/**
 * The body's bytes, or null when it is larger than `max` bytes (read no further than that): for a reader that decodes
 * them itself (the MCP endpoint refuses a body that is not UTF-8, where decoding as text would replace its bytes).
 */
export async function readBoundedBytes(request: Request, max: number): Promise<Buffer | null> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > max) return null;
  if (request.body === null) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await reader.read();
    } catch (error) {
      // The body's stream fails only when its connection does: the client hung up mid-body.
      throw new BodyAbandonedError({ cause: error });
    }
    const { done, value } = next;
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
