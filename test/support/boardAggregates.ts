/**
 * A synthetic board index's aggregates: `board_hour` and `board_total` summed from the `board_entry` rows already
 * written, as the indexer keeps them event by event (indexer/boards.ts: one bucket per board, account and hour; one
 * total per board and account). For tests and benches that write the entries in bulk (test/read/boardDelta.test.ts,
 * bench/boards-served.ts, bench/boards-history.ts); run on a session whose search_path is the index's schema.
 */
export async function aggregateBoardEntries(exec: (text: string) => Promise<unknown>): Promise<void> {
  await exec(`INSERT INTO board_hour (id, board, account, hour, total, count, max)
    SELECT board || account || h, board, account, h, sum(value), count(*), max(value)
      FROM (SELECT *, block_time - block_time % 3600 AS h FROM board_entry) x GROUP BY board, account, h`);
  await exec(`INSERT INTO board_total (id, board, account, total, count, max, last_block, first_block)
    SELECT board || account, board, account, sum(value), count(*), max(value), max(block_number), min(block_number)
      FROM board_entry GROUP BY board, account`);
}
