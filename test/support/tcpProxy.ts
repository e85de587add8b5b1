/**
 * A TCP fault proxy for tests (the rpcProxy idea one layer down): forwards 127.0.0.1:<port> to a real
 * server (Redis) until told to misbehave, so the limiter's outage handling is tested against the real
 * client and server, not a stub.
 */
import net, { type AddressInfo, type Socket } from "node:net";

export type TcpFaultMode =
  /** Forward bytes both ways. */
  | "pass"
  /** Accept and keep connections but forward nothing (a hung server / dropped packets). */
  | "blackhole"
  /**
   * Accept and keep connections, forward nothing for now, but keep every byte and forward it, in order, when the mode
   * is "pass" again: a server that hangs and then recovers (a stalled process, a long script), as TCP delivers it.
   */
  | "hold"
  /** Destroy every new connection at once (a server that is down). */
  | "refuse";

export type TcpProxy = {
  url: string;
  port: number;
  setMode(mode: TcpFaultMode): void;
  /** While passing, each chunk is forwarded this many ms late, each way (a slow but alive server); 0 = at once. */
  setDelay(ms: number): void;
  /** Destroys every open connection (a killed server or a broken network path). */
  dropConnections(): void;
  stop(): Promise<void>;
};

export async function startTcpProxy(upstream: { host: string; port: number }, scheme = "redis"): Promise<TcpProxy> {
  let mode: TcpFaultMode = "pass";
  let delayMs = 0;
  const open = new Set<Socket>();
  /** The writes held while holding, in the order they came (each direction's bytes stay in order). */
  const held: (() => void)[] = [];
  const track = (s: Socket) => {
    open.add(s);
    s.on("close", () => open.delete(s));
    s.on("error", () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (mode === "refuse") return client.destroy();
    const target = net.connect(upstream.port, upstream.host);
    track(target);
    client.on("close", () => target.destroy());
    target.on("close", () => client.destroy());
    // Bytes flow only while passing; in a blackhole they are swallowed, while holding kept for later.
    // Equal delays fire in the order they were set, so a delayed stream keeps its byte order.
    const forward = (to: Socket) => (b: Buffer) => {
      if (mode === "hold") held.push(() => !to.destroyed && to.write(b));
      if (mode !== "pass") return;
      if (delayMs === 0) to.write(b);
      else setTimeout(() => mode === "pass" && !to.destroyed && to.write(b), delayMs);
    };
    client.on("data", forward(target));
    target.on("data", forward(client));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    setMode: (m) => {
      mode = m;
      if (m === "pass") for (const write of held.splice(0)) write();
    },
    setDelay: (ms) => {
      delayMs = ms;
    },
    dropConnections: () => {
      for (const s of open) s.destroy();
    },
    stop: async () => {
      for (const s of open) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
