import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { exactOrigin } from '../common/origin.js';
import type { AllowedOrigins } from './allowed-origins.js';
import { CorsPolicy, CorsRoutes, type CorsApiRoutes, type CorsRoute } from './cors-routes.js';

/**
 * The request headers a browser app sends to the endpoints it may call (Fetch §3.2.5, CORS-unsafe
 * ones): its token (RFC 6750 §2.1, RFC 9449 §7.1), the form or JSON body's type, the DPoP proof,
 * the data API's conditions (RFC 9110 §13.1), and the request id the logs carry.
 */
export const ALLOWED_REQUEST_HEADERS = 'Authorization, Content-Type, DPoP, If-Match, If-None-Match, X-Request-Id';

/**
 * The response headers a page must read beyond the CORS-safelisted ones: the challenge of a 401
 * (RFC 6750 §3, RFC 9449 §7.1), the DPoP nonce (RFC 9449 §8), the data API's validators and links
 * (ETag, Location, Link, Allow, Accept-Patch), a 429's Retry-After (RFC 6585 §4; Latchkey sends no
 * other rate-limit header), and the request id to quote to support.
 */
export const EXPOSED_HEADERS = 'WWW-Authenticate, DPoP-Nonce, ETag, Location, Link, Retry-After, Allow, Accept-Patch, X-Request-Id';

/** How long a browser may keep a preflight's answer (Chromium keeps at most 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * Cross-origin resource sharing (the Fetch standard's CORS protocol) for browser apps, with the
 * rules of cors-routes.ts and the origins of allowed-origins.ts:
 * - a preflight (OPTIONS with Origin and Access-Control-Request-Method) to a route that allows the
 *   origin and the method is answered 204 at once, before any guard (it carries no token);
 *   any other preflight goes on as a plain OPTIONS request, answered as without CORS;
 * - the real answer gets `Access-Control-Allow-Origin` with the request's origin when that origin
 *   may read it, decided when the answer is sent, so that at /token and /revoke the client that
 *   the request named is known; and with it the headers a page must read, on errors too.
 * Never Access-Control-Allow-Credentials: these endpoints take tokens, not cookies, and an
 * unknown origin gets nothing (the browser then keeps the answer from the page). Requests without
 * an Origin header are not looked at beyond the route's rule.
 *
 * Not @fastify/cors: it decides in a hook that runs before /token's client is authenticated (the
 * guards run inside the route's handler), or at the latest in preSerialization, which Fastify runs
 * only for object payloads and so not for the errors and data API answers we send as JSON text;
 * and it adds an `OPTIONS *` route that would change every other path's answer to OPTIONS (404,
 * or 405 with Allow).
 */
export function answerCors(fastify: FastifyInstance, origins: AllowedOrigins, api: CorsApiRoutes): void {
  const routes = new CorsRoutes(api);
  fastify.addHook('onRequest', (request, reply, done) => {
    const route = preflightRoute(request, routes);
    if (route === undefined) return done();
    void answerPreflight(request, reply, route, origins).then(
      (answered) => {
        if (!answered) done();
      },
      // The origins could not be read (the database is down): answered as without CORS.
      () => done(),
    );
  });

  fastify.addHook('onSend', (request, reply, payload, done) => {
    const policy = routes.ofRoute(request.routeOptions?.url);
    // Nothing to add; or the preflight answered above.
    if (policy === undefined || reply.hasHeader('access-control-allow-origin')) return done(null, payload);
    if (policy === CorsPolicy.Public) {
      // The same for every request, so shared caches need no Vary.
      void reply.header('Access-Control-Allow-Origin', '*');
      return done(null, payload);
    }
    // Whether the answer allows a page depends on its Origin: no cache may serve it to another.
    addVary(reply, 'Origin');
    const origin = exactOrigin(request.headers.origin);
    if (origin === undefined) return done(null, payload);
    const allowed = policy === CorsPolicy.OwnClient ? origins.allowsClient(origin, clientNamedBy(request)) : origins.allowsAnyClient(origin);
    void allowed.then(
      (yes) => {
        if (yes) void reply.header('Access-Control-Allow-Origin', origin).header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
        done(null, payload);
      },
      () => done(null, payload),
    );
  });
}

/** The rule of a CORS preflight's path, when the request is one and the route allows the method it asks about. */
function preflightRoute(request: FastifyRequest, routes: CorsRoutes): CorsRoute | undefined {
  if (request.method !== 'OPTIONS' || request.headers.origin === undefined) return undefined;
  const method = request.headers['access-control-request-method'];
  if (typeof method !== 'string') return undefined;
  const route = routes.ofPath(request.url.split('?')[0]);
  // Methods are compared as sent: browsers upper-case only the standard ones they know (Fetch §2.2.1).
  return route?.methods.split(', ').includes(method) ? route : undefined;
}

/** Answers the preflight when the origin may call the route; false to let the request go on as without CORS. */
async function answerPreflight(request: FastifyRequest, reply: FastifyReply, route: CorsRoute, origins: AllowedOrigins): Promise<boolean> {
  let allowOrigin = '*';
  if (route.policy !== CorsPolicy.Public) {
    const origin = exactOrigin(request.headers.origin);
    // At /token and /revoke the client is not known yet (a preflight has no body): any client's
    // origin passes here, and the answer to the real request is decided for its client.
    if (origin === undefined || !(await origins.allowsAnyClient(origin))) return false;
    allowOrigin = origin;
    void reply.header('Vary', 'Origin');
  }
  void reply
    .code(204)
    .header('Access-Control-Allow-Origin', allowOrigin)
    .header('Access-Control-Allow-Methods', route.methods)
    .header('Access-Control-Allow-Headers', ALLOWED_REQUEST_HEADERS)
    .header('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS)
    .send();
  return true;
}

/**
 * The client a /token or /revoke request names: the one that authenticated, else (its
 * authentication failed, so the answer is an error) the form's client_id, so that the page of
 * that client can read why.
 */
function clientNamedBy(request: FastifyRequest): string | undefined {
  const authenticated = (request as FastifyRequest & { client?: { id?: unknown } }).client;
  if (typeof authenticated?.id === 'string') return authenticated.id;
  const body = request.body;
  if (body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return undefined;
  const clientId = (body as Record<string, unknown>).client_id;
  return typeof clientId === 'string' ? clientId : undefined;
}

/** Adds `field` to the Vary header the route may have set (the data API's Vary: Authorization). */
function addVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  if (current === undefined) {
    void reply.header('Vary', field);
    return;
  }
  const text = Array.isArray(current) ? current.join(', ') : String(current);
  const fields = text.split(',').map((value) => value.trim().toLowerCase());
  if (!fields.includes(field.toLowerCase()) && !fields.includes('*')) void reply.header('Vary', `${text}, ${field}`);
}
