import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP relay in front of a server that holds back everything the server sends for `delayMs`, in
 * order, and passes what the client sends at once: a slow network on the way back. Put in front of
 * an instance's LISTEN connection (DATABASE_LISTEN_URL), it slows the change notifications that
 * reach that instance and nothing else (its pool still connects directly).
 */
export class SlowRelay {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly target: URL,
  ) {}

  /** Relays to the host and port of `targetUrl` (a postgres:// URL), holding back its answers for `delayMs`. */
  static async start(targetUrl: string, delayMs: number): Promise<SlowRelay> {
    const target = new URL(targetUrl);
    const relay = new SlowRelay(createServer((client) => relay.relay(client, delayMs)), target);
    await new Promise<void>((resolve) => relay.server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  /** `targetUrl` with this relay's host and port: the same database, reached through the relay. */
  get url(): string {
    const url = new URL(this.target.href);
    url.hostname = '127.0.0.1';
    url.port = String((this.server.address() as AddressInfo).port);
    return url.href;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket, delayMs: number): void {
    const upstream = connect(Number(this.target.port || 5432), this.target.hostname);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    }
    client.pipe(upstream);
    // Timers of one duration fire in the order they were set: the chunks keep theirs.
    upstream.on('data', (chunk: Buffer) => setTimeout(() => client.write(chunk), delayMs));
    upstream.on('end', () => setTimeout(() => client.end(), delayMs));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
  }
}
