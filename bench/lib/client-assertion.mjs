/**
 * private_key_jwt (RFC 7523 §2.2, §3) on the client side of the benchmark: an ES256 key the client
 * is registered with (its public JWK Set), client assertions signed with node:crypto (synchronous,
 * about as costly as a DPoP proof), and the load of scenario j: client_credentials token requests,
 * each authenticated with an assertion of its own.
 *
 * As with the DPoP proofs of scenario i (bench/lib/dpop.mjs), signing during the run would block
 * the load generator's event loop inside the latency it measures, so the assertions of a run are
 * signed before it starts: iss = sub = the client_id, aud = the server's issuer (the one value
 * Latchkey accepts; oidc-provider also takes its token endpoint URL), a unique jti, iat the moment
 * of signing and exp a couple of minutes after the run's planned end, never more than
 * MAX_LIFETIME_SECONDS away (Latchkey refuses an exp more than 300 s ahead by default). The pool
 * is sized as dpop.mjs sizes its proofs: twice what the fastest rate seen so far for that request
 * would use. Should it still run dry, the remaining requests sign inline and a warning says how
 * many did. The load generator's own CPU share is returned (loadCpuPct) and warned about above 80%.
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { FORM, request } from './http.mjs';
import { varyingRequestLoad } from './load.mjs';

export const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** exp is this far past the run's planned end (signing the pool takes a few seconds before it). */
const EXP_AFTER_RUN_SECONDS = 120;
/** The furthest exp may be from iat: below Latchkey's CLIENT_ASSERTION_MAX_LIFETIME_SECONDS default (300). */
const MAX_LIFETIME_SECONDS = 270;
const MAX_RUN_SECONDS = MAX_LIFETIME_SECONDS - EXP_AFTER_RUN_SECONDS;
/** Pool size: the fastest rate seen for this request (or FIRST_GUESS_RPS before any) × seconds × SAFETY. */
const SAFETY = 2;
const FIRST_GUESS_RPS = 8_000;
/** The fastest rate measured per token request (origin + path + client), to size the next run's pool. */
const ratesSeen = new Map();

/**
 * A P-256 key pair for ES256 assertions: `jwks` is the public JWK Set to register the client with,
 * `header` the assertions' encoded protected header (alg and the key's kid).
 */
export function assertionKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  const kid = randomBytes(8).toString('base64url');
  const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid })).toString('base64url');
  return { privateKey, header, jwks: { keys: [{ kty, crv, x, y, kid, use: 'sig', alg: 'ES256' }] } };
}

/** One client assertion (RFC 7523 §3): a fresh jti, iat now unless given, exp `lifetime` seconds after iat. */
export function signAssertion(key, { clientId, audience, iat = Math.floor(Date.now() / 1000), lifetime = EXP_AFTER_RUN_SECONDS }) {
  const claims = { iss: clientId, sub: clientId, aud: audience, jti: randomBytes(16).toString('base64url'), iat, exp: iat + lifetime };
  const input = `${key.header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  // JWS wants the raw r‖s signature (RFC 7518 §3.4), not DER.
  return `${input}.${sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

/** The token request's form with the assertion appended (a compact JWS is form-safe: base64url and dots). */
function formWith(form, assertion) {
  return `${form}&client_assertion_type=${encodeURIComponent(JWT_BEARER_ASSERTION_TYPE)}&client_assertion=${assertion}`;
}

/**
 * Scenario j's load: POST `path` with `form` (grant_type=client_credentials and a scope) and a
 * client assertion of `key`'s per request, on `connections` autocannon connections for `seconds`.
 * One request with an assertion signed then must succeed (an access token in the answer) before
 * the pool is signed. With `nextClientId` (issue 47: a client picked among several registered with
 * `key`'s public key), each assertion of the pool is for the client it returns (iss = sub).
 */
export async function assertionTokenLoad({ baseUrl, token: { path, form, clientId, audience, key, nextClientId = () => clientId }, connections, seconds, expect = 200, rssMb }) {
  if (seconds > MAX_RUN_SECONDS) throw new Error(`client assertions: a run of ${seconds} s would outlive its assertions' exp (runs of at most ${MAX_RUN_SECONDS} s)`);
  const headers = { 'content-type': FORM };
  const check = await request(baseUrl, { method: 'POST', path, headers, body: formWith(form, signAssertion(key, { clientId, audience })) });
  if (check.status !== expect || (expect === 200 && typeof JSON.parse(check.body).access_token !== 'string')) {
    throw new Error(`client_credentials with a client assertion: expected ${expect} with an access token, got ${check.status} ${check.body.slice(0, 300)}`);
  }

  const url = new URL(path, baseUrl);
  const rateKey = `${url.origin}${url.pathname} ${clientId}`;
  const size = Math.ceil((ratesSeen.get(rateKey) ?? FIRST_GUESS_RPS) * seconds * SAFETY) + 2 * connections;
  const signingStarted = Date.now() / 1000;
  // exp: EXP_AFTER_RUN_SECONDS past the run's end had it started now; the signing below delays it by a few seconds.
  const lifetime = seconds + EXP_AFTER_RUN_SECONDS;
  const bodies = Array.from({ length: size }, () => formWith(form, signAssertion(key, { clientId: nextClientId(), audience, lifetime })));
  const signingSeconds = Date.now() / 1000 - signingStarted;
  if (signingSeconds > EXP_AFTER_RUN_SECONDS - 10) throw new Error(`client assertions: signing ${size.toLocaleString('en')} took ${signingSeconds.toFixed(0)} s; the first would expire before the run ends`);
  let next = 0;
  let signedInline = 0;
  const nextBody = () => {
    if (next < bodies.length) {
      const body = bodies[next];
      bodies[next++] = undefined;
      return body;
    }
    signedInline++;
    return formWith(form, signAssertion(key, { clientId: nextClientId(), audience }));
  };

  // The load generator's own CPU during the run (this process: autocannon and the assertion handout).
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  const result = await varyingRequestLoad({ baseUrl, request: { method: 'POST', path, headers }, nextBody, connections, seconds, expect, rssMb });
  const cpu = process.cpuUsage(cpuBefore);
  const loadCpuPct = ((cpu.user + cpu.system) / 1000 / (performance.now() - wallBefore)) * 100;
  ratesSeen.set(rateKey, Math.max(ratesSeen.get(rateKey) ?? 0, result.requests / seconds));
  if (signedInline > 0) console.warn(`client assertions for ${rateKey}: the ${size.toLocaleString('en')} signed in advance ran out; ${signedInline.toLocaleString('en')} were signed during the run`);
  if (loadCpuPct > 80) console.warn(`client assertions for ${rateKey}: the load generator was busy ${loadCpuPct.toFixed(0)}% of the run; it may be what limits the rate`);
  return { ...result, assertionsSigned: size, assertionsSignedInline: signedInline, loadCpuPct };
}
