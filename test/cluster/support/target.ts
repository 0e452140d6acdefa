/**
 * Requests that go to one instance in particular, or through the load balancer, and which instance
 * answered.
 *
 * To an instance: on its own port as the balancer sends it (plain http from loopback, which
 * TRUST_PROXY trusts, with the X-Forwarded-* headers deploy/nginx-proxy.conf and deploy/haproxy.cfg
 * set), so it believes the request came over https through the proxy, and the instance that answers
 * is the one the test chose, not the next in the round robin. Through the balancer: over https,
 * answered by whichever instance it names in X-Upstream.
 */
import * as oauth from 'oauth4webapi';
import type { Cluster } from './cluster.js';
import type { Instance } from './instance.js';

/** An instance, or the load balancer (whichever instance its round robin picks). */
export type Target = Instance | 'balancer';

export interface TargetAnswer {
  status: number;
  /** The JSON body; {} when empty. */
  body: Record<string, unknown>;
  headers: Headers;
  /** The instance that answered (the one addressed, or the one the balancer names in X-Upstream). */
  servedBy: string;
}

/** The name of the instance the balancer names in X-Upstream, or unknown(…) when it is none of the cluster's. */
export function upstreamName(cluster: Cluster, upstream: string | null): string {
  return cluster.instanceOf(upstream)?.name ?? `unknown(${upstream})`;
}

/**
 * The headers the balancer sets on what it passes on (deploy/nginx-proxy.conf, deploy/haproxy.cfg):
 * with them, an instance addressed on its own port takes the request for one that came over https.
 */
export function forwardedHeaders(cluster: Cluster): Record<string, string> {
  const host = new URL(cluster.issuer).host;
  return { host, 'x-forwarded-host': host, 'x-forwarded-proto': 'https', 'x-forwarded-for': '127.0.0.1' };
}

/** One request to `target`; `form`, when given, is the application/x-www-form-urlencoded body. */
export function requestTo(cluster: Cluster, target: Target, method: string, path: string, headers: Record<string, string> = {}, form?: Record<string, string>): Promise<TargetAnswer> {
  const body = form ? { type: 'application/x-www-form-urlencoded', text: new URLSearchParams(form).toString() } : undefined;
  return exchange(cluster, target, method, path, headers, body);
}

/** The same as requestTo, with a JSON body (the data API's writes). */
export function requestJsonTo(cluster: Cluster, target: Target, method: string, path: string, headers: Record<string, string>, json: unknown): Promise<TargetAnswer> {
  return exchange(cluster, target, method, path, headers, { type: 'application/json', text: JSON.stringify(json) });
}

async function exchange(cluster: Cluster, target: Target, method: string, path: string, headers: Record<string, string>, body?: { type: string; text: string }): Promise<TargetAnswer> {
  const all = { ...headers };
  let url = `${cluster.baseUrl}${path}`;
  if (target !== 'balancer') {
    url = `http://${target.address}${path}`;
    Object.assign(all, forwardedHeaders(cluster));
  }
  if (body) all['content-type'] = body.type;
  const response = await fetch(url, { method, headers: all, body: body?.text, redirect: 'manual', signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    headers: response.headers,
    servedBy: target === 'balancer' ? upstreamName(cluster, response.headers.get('x-upstream')) : target.name,
  };
}

/** Answers counted by outcome: '200', or the status and the error code ('401 invalid_client'). */
export function tally(answers: { status: number; body: Record<string, unknown> }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of answers.map((r) => (r.status === 200 ? '200' : `${r.status} ${String(r.body.error)}`))) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}

/** One request oauth4webapi made through the balancer: what it was, its status, and its X-Upstream. */
export interface Hop {
  step: string;
  status: number;
  upstream: string | null;
}

/** oauth4webapi's options for requests through the balancer: each one is recorded in `hops`. */
export function recordingHops(hops: Hop[]) {
  return {
    [oauth.customFetch]: async (url: string, init: oauth.CustomFetchOptions<string, unknown>) => {
      const response = await fetch(url, init as RequestInit);
      hops.push({ step: `${init.method} ${new URL(url).pathname}`, status: response.status, upstream: response.headers.get('x-upstream') });
      return response;
    },
  };
}
