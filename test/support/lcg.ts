/** A small seeded generator of numbers in [0, 1) (the same seed, the same numbers). */
export function lcg(start: number): () => number {
  let seed = start;
  return () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
}
