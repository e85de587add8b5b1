/**
 * The indexer's one Node warning that is not ours to fix. Ponder's realtime sync, finalizing a block range, sends
 * its inserts into `ponder_sync` (blocks, transactions, receipts, logs, traces) all at once on one transaction's
 * client (ponder/dist/esm/runtime/realtime.js, `promiseAllSettledWithThrow([syncStore.insertBlocks(…), …])`, in
 * 0.16.10 and 0.17.7 alike). pg 8 queues them in order, as it always has, and prints once per process "Calling
 * client.query() when the client is already executing a query is deprecated and will be removed in pg@9.0".
 * Nothing an operator can act on, and pg 9 is not installed (`pg` ^8 in package.json).
 *
 * This drops exactly that warning in the process it is called in (the indexer: src/api/index.ts); every other
 * warning, pg's other deprecations included, still prints. Our own pg pools issue no concurrent queries on one
 * client (api/server/indexDatabase.ts), and test/server/main.test.ts checks that neither production process prints
 * a Node warning. Remove this once Ponder awaits those inserts in turn.
 */

export const PG_QUERY_QUEUE_NOTICE = "Calling client.query() when the client is already executing a query";

export function dropPonderQueryQueueNotice(): void {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    const message = typeof warning === "string" ? warning : warning.message;
    if (message.startsWith(PG_QUERY_QUEUE_NOTICE)) return;
    return (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
}
