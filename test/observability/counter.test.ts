import { describe, expect, it } from "vitest";
import { Counter } from "../../api/observability/counter";

const line = (c: Counter) => c.render().split("\n").slice(2);

describe("Counter.series (a handle resolved once, for hot paths)", () => {
  it("counts into the same series as inc() with the same labels, in either order", () => {
    const c = new Counter("t_total", "help", ["method", "route"]);
    const labels = { method: "GET", route: "/a" };
    const handle = c.series(labels);
    c.inc(labels);
    handle.inc();
    handle.inc(3);
    c.inc(labels);
    expect(c.get(labels)).toBe(6);
    expect(line(c)).toEqual(['t_total{method="GET",route="/a"} 6']);
  });

  it("lists nothing until the first increment, as inc() does", () => {
    const c = new Counter("t_total", "help", ["route"]);
    const handle = c.series({ route: "/b" });
    expect(line(c)).toEqual([]);
    handle.inc();
    expect(line(c)).toEqual(['t_total{route="/b"} 1']);
  });

  it("keeps its labels as they were when resolved", () => {
    const c = new Counter("t_total", "help", ["route"]);
    const labels = { route: "/c" };
    const handle = c.series(labels);
    labels.route = "/changed";
    handle.inc();
    expect(c.get({ route: "/c" })).toBe(1);
    expect(c.get({ route: "/changed" })).toBe(0);
    expect(line(c)).toEqual(['t_total{route="/c"} 1']);
  });
});
