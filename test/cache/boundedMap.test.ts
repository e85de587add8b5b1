import { describe, expect, it } from "vitest";
import { BoundedMap } from "../../api/cache/boundedMap";

const keys = (m: BoundedMap<string, number>) => [...m].map(([k]) => k);

describe("BoundedMap", () => {
  it("insertion order: past capacity the first set goes; a key set again keeps its place; get does not move it", () => {
    const m = new BoundedMap<string, number>(2);
    m.set("a", 1).set("b", 2);
    expect(m.get("a")).toBe(1);
    m.set("a", 10);
    m.set("c", 3);
    expect(keys(m)).toEqual(["b", "c"]);
    expect(m.size).toBe(2);
    expect(m.has("a")).toBe(false);
  });

  it("recency order: get and set make a key the newest, peek does not", () => {
    const m = new BoundedMap<string, number>(2, "recency");
    m.set("a", 1).set("b", 2);
    expect(m.get("a")).toBe(1);
    m.set("c", 3);
    expect(keys(m)).toEqual(["a", "c"]);
    m.set("a", 4);
    expect(m.peek("c")).toBe(3);
    m.set("d", 5);
    expect(keys(m)).toEqual(["a", "d"]);
    expect(m.get("a")).toBe(4);
  });

  it("a falsy value is a value (get, peek, recency)", () => {
    const m = new BoundedMap<string, boolean | number>(2, "recency");
    m.set("f", false).set("z", 0);
    expect(m.get("f")).toBe(false);
    m.set("x", 1);
    expect([...m].map(([k]) => k)).toEqual(["f", "x"]);
  });

  it("delete and clear; deleting while iterating, oldest first, as with a Map", () => {
    const m = new BoundedMap<string, number>(5);
    for (const [k, v] of [
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ] as const)
      m.set(k, v);
    expect(m.delete("b")).toBe(true);
    for (const [k, v] of m) if (v < 3) m.delete(k);
    expect(keys(m)).toEqual(["c"]);
    m.clear();
    expect(m.size).toBe(0);
  });

  it("recency order matches a plain list model over random gets, sets, peeks, deletes and clears (the newest key's hits move nothing)", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (const capacity of [1, 2, 3, 5]) {
      const m = new BoundedMap<string, number>(capacity, "recency");
      let model: [string, number][] = [];
      for (let step = 0; step < 4000; step++) {
        const key = `k${rand(7)}`;
        const op = rand(20);
        const at = model.findIndex(([k]) => k === key);
        if (op < 8) {
          const got = m.get(key);
          expect(got).toBe(at === -1 ? undefined : model[at]![1]);
          if (at !== -1) model.push(...model.splice(at, 1));
        } else if (op < 16) {
          m.set(key, step);
          if (at !== -1) model.splice(at, 1);
          model.push([key, step]);
          while (model.length > capacity) model.shift();
        } else if (op < 18) {
          expect(m.peek(key)).toBe(at === -1 ? undefined : model[at]![1]);
        } else if (op < 19) {
          expect(m.delete(key)).toBe(at !== -1);
          if (at !== -1) model.splice(at, 1);
        } else if (rand(10) === 0) {
          m.clear();
          model = [];
        }
        expect([...m]).toEqual(model);
      }
    }
  });
});
