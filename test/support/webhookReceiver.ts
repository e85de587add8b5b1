/**
 * A webhook receiver as an integration team runs one: a real HTTP server on 127.0.0.1 that records every request
 * (headers, body, when) and answers 204 — or 500 while told to fail, or nothing at all while down (its port closed,
 * so an attempt is refused), or slowly, or with a body it never ends. The signature is checked by the test with its own implementation of the spec.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

export type Received = {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** Whether this request was answered 2xx (acknowledged). */
  acked: boolean;
  at: number;
};

export class WebhookReceiver {
  readonly received: Received[] = [];
  /** Requests answered 500 from now on (each request counts one down). */
  failNext = 0;
  /** Every request answered 500 while true. */
  failing = false;
  /** How long the answer waits after the request's body (a slow receiver, still inside the attempt's timeout). */
  delayMs = 0;
  /** Answers its status and the start of a body at once, then never ends the body (a streaming or stuck endpoint). */
  neverEndsBody = false;
  #server: Server | null = null;
  #sockets = new Set<Socket>();
  port = 0;

  async up(): Promise<void> {
    const server = createServer((req, res) => this.#handle(req, res));
    server.on("connection", (s) => {
      this.#sockets.add(s);
      s.on("close", () => this.#sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /** Closes the port: attempts are refused until up() again (on the same port). */
  async down(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (!server) return;
    for (const s of this.#sockets) s.destroy();
    await new Promise((r) => server.close(r));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  acked(): Received[] {
    return this.received.filter((r) => r.acked);
  }

  /** Waits until `match` holds of the acknowledged requests. */
  async until<T>(match: (acked: Received[]) => T | undefined | false, ms = 30_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = match(this.acked());
      if (found) return found;
      if (Date.now() > deadline) {
        throw new Error(
          `no match in ${ms} ms; acknowledged: ${JSON.stringify(this.acked().map((r) => r.body.slice(0, 160)))}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const fail = this.failing || this.failNext > 0;
      if (this.failNext > 0) this.failNext--;
      this.received.push({
        id: String(req.headers["webhook-id"]),
        timestamp: String(req.headers["webhook-timestamp"]),
        signature: String(req.headers["webhook-signature"]),
        body: Buffer.concat(chunks).toString("utf8"),
        acked: !fail,
        at: Date.now(),
      });
      const answer = () => {
        if (this.neverEndsBody) {
          res.writeHead(fail ? 500 : 200, { "content-type": "text/plain" });
          res.write("ok");
          return;
        }
        res.writeHead(fail ? 500 : 204).end();
      };
      if (this.delayMs > 0) setTimeout(answer, this.delayMs);
      else answer();
    });
  }
}
