import { Hono } from "hono";

// Ponder requires an API file; the benchmark reads only Ponder's built-in /status.
export default new Hono();
