/**
 * Bench-only prefill for the oidc-provider peer (issue 47): live access tokens and refresh-token
 * families created inside the server, through oidc-provider's own models (Grant, AccessToken,
 * RefreshToken and their save(), i.e. the configured adapter's upsert), so the records are exactly
 * what a code exchange stores, at a fraction of the cost of a browser flow each. Not part of the
 * provider: the server mounts it on its own HTTP server (127.0.0.1) only when BENCH_PREFILL_SECRET
 * is set, and answers only requests carrying that secret.
 *
 * POST PREFILL_PATH with JSON { kind, from, count, jkt? } → { values, clientIds? }:
 * - `AccessToken`: tokens from index `from` on, as a consented code exchange with offline_access
 *   issues them (gty authorization_code, scope "openid offline_access", not bound to a session, as
 *   the "one" preset's token; without its sessionUid, which nothing reads unless expiresWithSession). Token i belongs to grant i % people: person j with client j % clients,
 *   one grant per person, created on first use. With `jkt` (RFC 9449 §6, the JWK thumbprint) the
 *   tokens are DPoP-bound to that key.
 * - `RefreshToken`: family f (from `from` on) is a grant of its own (person f % people, client
 *   f % clients) and its first refresh token, rotations 0; `clientIds[i]` is the client that must
 *   present values[i]. A grant per family, as a browser sign-in per token did before: oidc-provider
 *   revokes the whole grant when a rotated token is reused.
 * - `settle`: a full garbage collection once the prefill is over; { before, after } its memory.
 */
import { timingSafeEqual } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { clientIdAt, personIdAt, PREFILL_SECRET_HEADER } from './oidc-provider-bench-data.mjs';
import { inParallel } from '../lib/in-parallel.mjs';

const OFFLINE_SCOPE = 'openid offline_access';
// Saves in flight at once: enough to keep a Redis connection's pipeline full, few enough to stay small.
const IN_FLIGHT = 500;
const MAX_COUNT = 100_000;

/** The route's handler: (req, res) → Promise; `clients` and `people` as the server was started with. */
export function prefillHandler(provider, { secret, clients, people }) {
  const accessGrants = new Map(); // person index → Promise of the grant's id

  async function newGrant(accountId, clientId) {
    const grant = new provider.Grant({ accountId, clientId });
    grant.addOIDCScope(OFFLINE_SCOPE);
    return grant.save();
  }

  function accessGrant(j) {
    let grantId = accessGrants.get(j);
    if (!grantId) {
      grantId = newGrant(personIdAt(j), clientIdAt(j % clients));
      accessGrants.set(j, grantId);
    }
    return grantId;
  }

  async function accessToken(i, jkt) {
    const j = i % people;
    const token = new provider.AccessToken({
      accountId: personIdAt(j),
      clientId: clientIdAt(j % clients),
      grantId: await accessGrant(j),
      gty: 'authorization_code',
      scope: OFFLINE_SCOPE,
      ...(jkt && { jkt }),
    });
    return token.save();
  }

  async function refreshFamily(f) {
    const accountId = personIdAt(f % people);
    const clientId = clientIdAt(f % clients);
    const grantId = await newGrant(accountId, clientId);
    // authTime as a sign-in would have left it: the refreshes' ID tokens carry it (auth_time).
    const token = new provider.RefreshToken({ accountId, clientId, grantId, gty: 'authorization_code', scope: OFFLINE_SCOPE, rotations: 0, authTime: Math.floor(Date.now() / 1000) });
    return { value: await token.save(), clientId };
  }

  return async function prefill(req, res) {
    const given = Buffer.from(String(req.headers[PREFILL_SECRET_HEADER] ?? ''));
    const expected = Buffer.from(secret);
    if (req.method !== 'POST' || given.length !== expected.length || !timingSafeEqual(given, expected)) return reply(res, 403, { error: 'forbidden' });
    let text = '';
    req.setEncoding('utf8');
    for await (const chunk of req) text += chunk;
    const { kind, from = 0, count, jkt } = JSON.parse(text);
    if (kind === 'settle') return reply(res, 200, settle());
    if (!Number.isInteger(from) || from < 0 || !Number.isInteger(count) || count < 1 || count > MAX_COUNT) return reply(res, 400, { error: `from ≥ 0 and count in 1..${MAX_COUNT}` });
    if (kind === 'AccessToken') {
      reply(res, 200, { values: await inParallel(count, IN_FLIGHT, (i) => accessToken(from + i, jkt)) });
    } else if (kind === 'RefreshToken') {
      const families = await inParallel(count, IN_FLIGHT, (i) => refreshFamily(from + i));
      reply(res, 200, { values: families.map((family) => family.value), clientIds: families.map((family) => family.clientId) });
    } else {
      reply(res, 400, { error: `unknown kind ${kind}` });
    }
  };
}

/**
 * After a prefill: a full garbage collection, so the server's RSS in the results is what it keeps,
 * not the prefill's garbage (V8 keeps a grown heap for a long while otherwise), then its memory.
 */
function settle() {
  const before = process.memoryUsage();
  setFlagsFromString('--expose-gc');
  // 'last-resort': the collection that also hands freed pages back to the system (otherwise left to V8's memory reducer, seconds later).
  runInNewContext('gc')({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  const after = process.memoryUsage();
  const mb = (bytes) => Math.round(bytes / 2 ** 20);
  return { before: { rssMb: mb(before.rss), heapUsedMb: mb(before.heapUsed) }, after: { rssMb: mb(after.rss), heapUsedMb: mb(after.heapUsed) } };
}

function reply(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}
