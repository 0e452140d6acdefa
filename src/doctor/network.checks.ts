import { Redis } from 'ioredis';
import type { AppConfig } from '../config/app.config.js';
import type { MetricsConfig } from '../config/metrics.config.js';
import type { RedisConfig } from '../config/redis.config.js';
import { fail, ok, skip, warn, type CheckResult } from './check.js';

const REDIS_TIMEOUT_MS = 2000;
const HTTP_TIMEOUT_MS = 5000;

/** Redis, when REDIS_URL names one: the instances share rate limits only while it answers. The URL is never printed (it may hold a password). */
export async function redisCheck(config: RedisConfig): Promise<CheckResult> {
  if (!config.url) return skip('redis', 'REDIS_URL is not set.');
  const client = new Redis(config.url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: REDIS_TIMEOUT_MS, commandTimeout: REDIS_TIMEOUT_MS, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return ok('redis', 'Redis answers.');
  } catch (error) {
    return fail('redis', `REDIS_URL is set but Redis does not answer (${(error as Error).message}): every instance counts rate limits on its own, and /health/ready reports Redis down.`, 'Start Redis or correct REDIS_URL (host, port, password, rediss:// for TLS); unset it for a single instance.');
  } finally {
    client.disconnect();
  }
}

/** The URL with no trailing slash, as ISSUER is read (app.config.ts). */
const normalized = (url: string): string => url.replace(/\/+$/, '');

async function get(url: string): Promise<Response> {
  return fetch(url, { signal: AbortSignal.timeout(HTTP_TIMEOUT_MS), redirect: 'manual' });
}

/**
 * The deployment as clients reach it, at its public URL: the issuer it announces (RFC 8414 §3.3:
 * the metadata's issuer must be the URL clients were given, and ours is ISSUER), TLS, readiness,
 * and /metrics kept off the public side. Without --url these are skipped.
 */
export async function publicUrlChecks(url: string | undefined, app: AppConfig, metrics: MetricsConfig): Promise<CheckResult[]> {
  if (url === undefined) return ['issuer', 'health', 'metrics'].map((id) => skip(id, 'Give --url https://your-public-url to check the deployment from outside.'));
  const results: CheckResult[] = [];
  const issuerFix = 'Set ISSUER to the exact public URL clients use (scheme, host, port, path), the same on every instance, then restart them.';
  let announced: string | undefined;
  try {
    const response = await get(`${normalized(url)}/.well-known/oauth-authorization-server`);
    announced = response.ok ? ((await response.json()) as { issuer?: string }).issuer : undefined;
    if (!response.ok) results.push(fail('issuer', `${url} answers ${response.status} for its metadata (/.well-known/oauth-authorization-server).`, 'Check that --url is the deployment and that the proxy forwards /.well-known/ to Latchkey.'));
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const tls = /CERT|SSL|TLS/i.test(`${cause?.code ?? ''} ${cause?.message ?? ''}`);
    results.push(fail('issuer', `${url} cannot be reached: ${cause?.message ?? (error as Error).message}.`, tls ? 'Fix the certificate: it must be valid for the host and chain to a trusted authority.' : 'Check the URL, DNS and the load balancer.'));
  }
  if (announced !== undefined) {
    if (normalized(url) !== app.issuer) {
      results.push(fail('issuer', `Clients reach the deployment at ${normalized(url)}, but ISSUER is ${app.issuer}: tokens and metadata name the wrong issuer, and clients that check it (RFC 8414 §3.3, RFC 9207) refuse them.`, issuerFix));
    } else if (announced !== app.issuer) {
      results.push(fail('issuer', `${url} announces the issuer ${announced}, but this environment says ${app.issuer}: the server runs with another ISSUER than the environment doctor was given.`, issuerFix));
    } else {
      results.push(url.startsWith('https://') ? ok('issuer', `${app.issuer} announces itself as the issuer, over TLS.`) : warn('issuer', `${app.issuer} announces itself as the issuer, over plain http.`, 'Serve the public URL over https (RFC 6749 §3.1).'));
    }
  }
  try {
    const ready = await get(`${normalized(url)}/health/ready`);
    results.push(ready.status === 200 ? ok('health', `${normalized(url)}/health/ready answers 200.`) : fail('health', `${normalized(url)}/health/ready answers ${ready.status}: ${await ready.text()}`, 'A dependency of the instance that answered is down (the details name it); the load balancer should route around it.'));
    const exposed = await get(`${normalized(url)}/metrics`);
    const metricsText = exposed.status === 200 ? await exposed.text() : '';
    if (metricsText.includes('latchkey_')) {
      results.push(fail('metrics', `${normalized(url)}/metrics serves Latchkey's metrics to anyone.`, 'Keep METRICS_PORT off the public listener and the load balancer (docs/operations/observability.md).'));
    } else {
      results.push(await metricsListenerCheck(metrics));
    }
  } catch (error) {
    results.push(fail('health', `${normalized(url)}/health/ready cannot be reached: ${(error as Error).message}.`, 'Check the load balancer and that the instances run.'));
    results.push(skip('metrics', 'The public URL cannot be reached.'));
  }
  return results;
}

/** The private metrics listener, seen from where doctor runs (on an instance's host, it is there). */
async function metricsListenerCheck(metrics: MetricsConfig): Promise<CheckResult> {
  if (!metrics.enabled) return warn('metrics', 'METRICS_ENABLED=false: nothing to scrape.', 'Enable metrics on every instance and scrape them (docs/operations/observability.md, "What to watch").');
  const host = metrics.host === '0.0.0.0' || metrics.host === '::' ? '127.0.0.1' : metrics.host;
  const at = `http://${host.includes(':') ? `[${host}]` : host}:${metrics.port}/metrics`;
  try {
    const response = await get(at);
    if (response.ok && (await response.text()).includes('latchkey_')) return ok('metrics', `Not public; ${at} serves them.`);
    return warn('metrics', `Not public; ${at} answers ${response.status}.`, 'Run doctor on an instance host, or check METRICS_HOST and METRICS_PORT.');
  } catch {
    return warn('metrics', `Not public; ${at} cannot be reached from here.`, 'Run doctor on an instance host to check the metrics listener, or check METRICS_HOST and METRICS_PORT.');
  }
}
