import { request as httpRequest } from "node:http";
import { connect } from "node:net";

/**
 * A response as node:http delivers it: headers exactly as sent (a repeated header stays an array), and
 * `rawHeaders` as they came on the wire (names as spelled, in order: name, value, name, value…).
 */
export type RawAnswer = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  rawHeaders: string[];
  body: string;
};

/** One request with node:http, so a header can be sent twice (fetch would merge it first). */
export function sendRaw(
  url: string,
  method = "GET",
  headers: Record<string, string | string[]> = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, rawHeaders: res.rawHeaders, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** One raw exchange on a fresh socket: what a client that does not speak HTTP properly gets back. */
export function rawExchange(base: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    let answer = "";
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(bytes));
    socket.on("data", (c) => {
      answer += c;
    });
    socket.on("close", () => resolve(answer));
    socket.on("error", () => resolve(answer));
    socket.setTimeout(5_000, () => socket.destroy());
  });
}

/** One GET from a given local address (127.0.0.x: another client of a loopback server), on a fresh connection. */
export function getFrom(url: string, localAddress: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, agent: false, timeout: 10_000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}
