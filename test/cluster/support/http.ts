/**
 * Requests through the load balancer over https (fetch trusts the run's certificate through
 * NODE_EXTRA_CA_CERTS), each answer carrying the instance that served it.
 */
import { basicAuth } from '../../helpers/oauth-flow.js';
import type { ClusterClient } from './cluster.js';

export interface Reply {
  /** The HTTP status, or 0 when the request got no answer at all (connection error). */
  status: number;
  /** X-Upstream: the instance(s) the balancer passed the request to (nginx lists each one it tried, HAProxy names the last). */
  upstream: string | null;
  /** How many times the balancer sent the request again, to another instance (retriesOf). */
  retries: number;
  body: Record<string, unknown>;
  error?: string;
}

export interface RequestOptions {
  form?: Record<string, string>;
  json?: unknown;
  headers?: Record<string, string>;
}

export async function send(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  } else if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  try {
    const response = await fetch(baseUrl + path, { method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(30_000) });
    const text = await response.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      parsed = { text };
    }
    return { status: response.status, upstream: response.headers.get('x-upstream'), retries: retriesOf(response.headers), body: parsed };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { status: 0, upstream: null, retries: 0, body: {}, error: cause ?? (error as Error).message };
  }
}

/**
 * How many times the balancer sent a request again before this answer: nginx lists every address it
 * tried in X-Upstream ("a, b": once); HAProxy names only the last one there and gives its retry count
 * in X-Upstream-Retries (its %rc: "+1" when the retry went to another instance, as it always does here).
 */
export function retriesOf(headers: Headers): number {
  const retries = headers.get('x-upstream-retries');
  if (retries !== null) return Number(retries.replace('+', '')) || 0;
  return (headers.get('x-upstream')?.split(',').length ?? 1) - 1;
}

/** POST to a client-authenticated form endpoint (/token, /introspect) with HTTP Basic. */
export function postAsClient(baseUrl: string, client: ClusterClient, path: string, form: Record<string, string>): Promise<Reply> {
  return send(baseUrl, 'POST', path, { form, headers: { authorization: basicAuth(client.clientId, client.clientSecret) } });
}

export function withBearer(token: string, options: RequestOptions = {}): RequestOptions {
  return { ...options, headers: { ...options.headers, authorization: `Bearer ${token}` } };
}

/** Runs `task` over `items` with at most `concurrency` at a time, results in order. */
export async function inParallel<T, R>(items: T[], concurrency: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
