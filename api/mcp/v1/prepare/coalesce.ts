import { originOf, type RpcClient, RpcError, type RpcRequest, type RpcRequestOptions } from "../../../chain/rpc";

/**
 * A view of the app's one RpcClient that sends the requests made in the same tick as a single JSON-RPC
 * batch, so a prepare with two independent reads (lock-via-furnace: quote + allowance) costs one round
 * trip while each read keeps its own code path and error. Made per request; it holds no state beyond
 * the tick it batches.
 */
export function coalesceRequests(rpc: RpcClient): RpcClient {
  type Pending = {
    req: RpcRequest;
    decode: ((result: unknown) => unknown) | undefined;
    resolve(v: unknown): void;
    reject(e: unknown): void;
  };
  let queue: Pending[] = [];

  const alone = (p: Pending) => {
    rpc.request(p.req, { decode: p.decode }).then(p.resolve, p.reject);
  };

  async function flush() {
    const items = queue;
    queue = [];
    if (items.length === 1) return alone(items[0]!);
    try {
      // Each read's own decoder runs on its member, so each member is counted by its own outcome.
      const results = await rpc.batch(
        items.map((p) => p.req),
        { decode: items.map((p) => p.decode) },
      );
      for (const [i, p] of items.entries()) p.resolve(results[i]);
    } catch (error) {
      if (!(error instanceof RpcError) || error.kind === "rpc" || error.kind === "invalid") {
        // One member failed (a revert, a malformed member: an RpcError or its decoder's own error) and a batch
        // cannot say which: each read asks again alone, so each gets its own answer. Costs extra round trips on
        // this path only.
        for (const p of items) alone(p);
      } else {
        // The transport failed: every member failed the same way.
        for (const p of items) p.reject(error);
      }
    }
  }

  return {
    redactedUrl: rpc.redactedUrl,
    origin: originOf(rpc),
    request<T>(req: RpcRequest, options?: RpcRequestOptions<T>): Promise<T> {
      // A call with its own cancellation cannot share a batch with calls that have none: sent alone.
      if (options?.signal) return rpc.request(req, options);
      return new Promise<T>((resolve, reject) => {
        if (queue.length === 0) setImmediate(() => void flush());
        queue.push({ req, decode: options?.decode, resolve: resolve as (v: unknown) => void, reject });
      });
    },
    batch: (reqs, options) => rpc.batch(reqs, options),
  };
}
