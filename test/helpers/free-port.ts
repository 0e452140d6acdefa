import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/**
 * The kernel's ephemeral range (Linux: /proc/sys/net/ipv4/ip_local_port_range, default
 * 32768–60999). A port the kernel handed out from it (listen(0)) and then released is free only
 * for a moment: every outbound connection the test opens meanwhile (PostgreSQL, Redis, an HTTP
 * fetch) takes its local port from the same range and can take that one. CI saw
 * `EADDRINUSE 127.0.0.1:32965` that way. Ports below the range are never handed out implicitly.
 */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low > 0 && high >= low) return [low, high];
  } catch {
    // Not Linux: the IANA dynamic range (RFC 6335 §6) is what most other systems use.
  }
  return [49152, 65535];
}

const [EPHEMERAL_LOW] = ephemeralRange();
/** Where the picks come from: registered ports below the ephemeral range, above the well-known ones. */
const PICK_LOW = 10_000;
const PICK_HIGH = Math.max(PICK_LOW + 1_000, EPHEMERAL_LOW - 1);

function listenOn(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => resolve(server));
  });
}

/**
 * `count` distinct ports on loopback that are free now and that no outbound connection will take
 * before the caller binds them (they lie below the ephemeral range). Held open together while
 * picking, so no two are the same; a port another process holds is skipped.
 */
export async function freePorts(count: number): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  for (let tries = 0; ports.length < count; tries += 1) {
    if (tries > 1_000) throw new Error(`no ${count} free ports found between ${PICK_LOW} and ${PICK_HIGH}`);
    const port = PICK_LOW + Math.floor(Math.random() * (PICK_HIGH - PICK_LOW + 1));
    if (ports.includes(port)) continue;
    const server = await listenOn(port);
    if (server === undefined) continue;
    held.push(server);
    ports.push(port);
  }
  await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** One port that is free now and stays out of the kernel's reach until the caller binds it. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port;
}
