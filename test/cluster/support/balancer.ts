/**
 * The load balancer in front of the instances, as the run's topology says (CLUSTER_TOPOLOGY):
 * nginx as docker-compose.yml deploys it, or HAProxy with deploy/haproxy.cfg. Either terminates TLS
 * on loopback and names the instance that answered in an X-Upstream response header.
 */
import { HAProxy } from './haproxy.js';
import type { Instance } from './instance.js';
import { Nginx } from './nginx.js';
import type { Topology } from './settings.js';

export interface Balancer {
  /** As test titles and logs name it. */
  readonly name: string;
  /** https://127.0.0.1:port */
  readonly baseUrl: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /**
   * Resolves once the balancer sends requests to every instance again, e.g. after PostgreSQL came
   * back (HAProxy takes an instance out while its readiness probe fails, and back after two good ones).
   */
  waitUntilServing(timeoutMs?: number): Promise<void>;
  logTail(lines?: number): string;
}

export function createBalancer(topology: Topology, port: number, instances: Instance[]): Balancer {
  return topology.balancer === 'haproxy' ? new HAProxy(port, instances) : new Nginx(port, instances.map((i) => i.address));
}
