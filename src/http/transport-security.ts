import type { FastifyInstance } from 'fastify';
import type { AppConfig } from '../config/app.config.js';

/** Probes answer over plain http: load balancers and orchestrators poll instances directly. */
const PLAIN_HTTP_PATHS = new Set(['/health/live', '/health/ready']);

/** One year, and subdomains: what browsers' preload lists ask for (RFC 6797 §6.1). */
const HSTS = 'max-age=31536000; includeSubDomains';

/**
 * The spec requires TLS for every endpoint that carries credentials (RFC 6749 §3.1, §3.2, §10.9;
 * RFC 6750 §5.3). A request counts as https when it arrived on our own TLS listener, or through a
 * load balancer named in TRUST_PROXY that says so in X-Forwarded-Proto (Fastify's request.protocol
 * believes that header only from those addresses).
 *
 * - In production, anything else is answered 400 {"error":"https_required"} before routing, so no
 *   credential sent in clear is even looked at. ALLOW_UNSAFE=http turns this off.
 * - Responses to https requests carry HSTS; plain-http responses never do (RFC 6797 §7.2).
 */
export function enforceTransportSecurity(fastify: FastifyInstance, config: AppConfig): void {
  const requireHttps = config.production && !config.allowUnsafe.has('http');
  fastify.addHook('onRequest', (request, reply, done) => {
    if (request.protocol === 'https') {
      void reply.header('Strict-Transport-Security', HSTS);
    } else if (requireHttps && !PLAIN_HTTP_PATHS.has(request.url.split('?')[0]) && !isInProcess(request.raw)) {
      void reply
        .code(400)
        .header('Content-Type', 'application/json;charset=UTF-8')
        .header('Cache-Control', 'no-store')
        .send(JSON.stringify({ error: 'https_required', error_description: 'This server only accepts requests over HTTPS' }));
      return;
    }
    done();
  });
}

/**
 * A request the admin console makes to this server while serving an administrator's request
 * (admin-console/in-process-http.ts: Fastify's inject). Only code in this process can make one:
 * light-my-request marks its request object, which no network request reaches. It never left the
 * process, and the request it serves passed this check.
 */
function isInProcess(raw: object): boolean {
  return (raw as { isLightMyRequest?: unknown }).isLightMyRequest === true;
}
