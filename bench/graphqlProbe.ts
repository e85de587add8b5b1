/**
 * Another client's GraphQL query during a flood: `body` (a document the process holds) posted one at a time for
 * `forMs`, 5 a second — inside the client's own `graphql` budget (300 a minute), so what it measures is the flood, not
 * its own limit. Each one's time, and the failures by status and error code. Used by bench/abuse-choices.ts and
 * bench/abuse-soak.ts.
 */
export async function queryProbe(
  base: string,
  body: string,
  forMs: number,
): Promise<{ ms: number[]; failed: number; why: Record<string, number> }> {
  const out: number[] = [];
  let failed = 0;
  const why: Record<string, number> = {};
  const until = performance.now() + forMs;
  while (performance.now() < until) {
    const t = performance.now();
    const res = await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    }).catch(() => null);
    const text = res ? await res.text() : "";
    if (res?.status !== 200 || text.includes('"errors"')) {
      failed++;
      const key = `${res?.status ?? "no answer"} ${/"code":"([A-Z_]+)"/.exec(text)?.[1] ?? "no code"}`;
      why[key] = (why[key] ?? 0) + 1;
    }
    out.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { ms: out, failed, why };
}
