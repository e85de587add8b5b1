/**
 * A flood of new GraphQL documents, as a process of its own: ADDRESSES clients (127.0.1.1, 127.0.1.2, …), each on
 * one keep-alive connection (bench/socketFlood.ts), posting documents near the limits (30 aliased lists), every one
 * new (its numbers differ), back to back and reading every answer, for DURATION_MS. Prints
 * `{"requests":N,"byStatus":{…}}`. Used by bench/abuse-choices.ts.
 */
import { socketFlood } from "./socketFlood";

const base = new URL(process.env.BASE!);
const addresses = Number(process.env.ADDRESSES ?? 400);
const durationMs = Number(process.env.DURATION_MS ?? 10_000);

let n = 0;
const request = () => {
  const at = n++;
  const query = `{ ${Array.from(
    { length: 30 },
    (_, a) => `a${a}: lockEvents(where: { tokenId: "${at * 30 + a}" }, limit: 1) { items { kind tokenId owner } }`,
  ).join(" ")} }`;
  const body = JSON.stringify({ query });
  return (
    `POST /graphql HTTP/1.1\r\nhost: ${base.host}\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
};
const result = await socketFlood({ base, addresses, durationMs, request });
process.stdout.write(`${JSON.stringify(result)}\n`);
