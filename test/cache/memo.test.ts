import { describe, expect, it } from "vitest";
import { memoizeSuccess } from "../../api/cache/memo";

describe("memoizeSuccess", () => {
  it("loads once and shares the value, concurrent callers included", async () => {
    let loads = 0;
    const get = memoizeSuccess(async () => ++loads);
    expect(await Promise.all([get(), get(), get()])).toEqual([1, 1, 1]);
    expect(await get()).toBe(1);
    expect(loads).toBe(1);
  });

  it("forgets a failure: the next call loads again", async () => {
    let loads = 0;
    const get = memoizeSuccess(async () => {
      loads++;
      if (loads === 1) throw new Error("passing");
      return "ok";
    });
    await expect(get()).rejects.toThrow("passing");
    expect(await get()).toBe("ok");
    expect(await get()).toBe("ok");
    expect(loads).toBe(2);
  });
});
