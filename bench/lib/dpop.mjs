/**
 * DPoP (RFC 9449) on the client side of the benchmark: an ES256 key, proofs signed with node:crypto
 * (synchronous, about 75 µs each here), a token request that answers use_dpop_nonce once, and the
 * load of scenario i: DPoP-bound reads, each request with a proof of its own.
 *
 * Signed during the run, each proof would block the load generator's event loop for those 75 µs,
 * more than autocannon spends on a request (about 65 µs here), inside the latency it measures. So
 * the proofs of a run are signed before it starts, each with a unique jti, the read's htm, htu and
 * ath, the server's nonce (from one request just before) and an iat in the middle of the run; there
 * are twice as many as the fastest rate seen so far for that read would use (a first measured run
 * was 1.45 times as fast as its warm-up, before which the JIT had not settled). Should the pool
 * still run dry, the remaining requests sign inline and a warning says how many did. The load
 * generator's own CPU share during the run is returned (loadCpuPct, in the results' runs) and
 * warned about above 80%.
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { request } from './http.mjs';
import { varyingRequestLoad } from './load.mjs';

/** A read's proofs must be used within this many seconds of their iat (Latchkey accepts ±60 s). */
const MAX_RUN_SECONDS = 100;
/** Pool size: the fastest rate seen for this read (or FIRST_GUESS_RPS before any) × seconds × SAFETY. */
const SAFETY = 2;
const FIRST_GUESS_RPS = 8_000;
/** The fastest rate measured per read (origin + path), to size the next run's pool. */
const ratesSeen = new Map();

/** A P-256 key pair for ES256 proofs; `header` is the proofs' encoded protected header (typ, alg, public jwk). */
export function dpopKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  const header = Buffer.from(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } })).toString('base64url');
  return { privateKey, header };
}

/** One proof (RFC 9449 §4.2): a fresh jti; ath only when an access token is given, nonce only when one is. */
export function signProof(key, { htm, htu, accessToken, ath = accessToken === undefined ? undefined : accessTokenHash(accessToken), nonce, iat = Math.floor(Date.now() / 1000) }) {
  const claims = { jti: randomBytes(16).toString('base64url'), htm, htu, iat };
  if (ath !== undefined) claims.ath = ath;
  if (nonce !== undefined) claims.nonce = nonce;
  const input = `${key.header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  // JWS wants the raw r‖s signature (RFC 7518 §3.4), not DER.
  return `${input}.${sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

export function accessTokenHash(accessToken) {
  return createHash('sha256').update(accessToken).digest('base64url');
}

/** True for a response asking for a DPoP nonce (400 at a token endpoint, 401 at a resource; RFC 9449 §8, §9). */
function asksForNonce(response) {
  return (response.status === 400 || response.status === 401) && /use_dpop_nonce/.test(`${response.headers['www-authenticate'] ?? ''} ${response.body}`) && typeof response.headers['dpop-nonce'] === 'string';
}

/**
 * A token request (`{ method, path, headers, body }`, as for request()) with a DPoP proof, sent once
 * without a nonce and, when the server asks for one, again with the nonce it handed out.
 */
export async function dpopTokenRequest(baseUrl, key, tokenRequest) {
  const htu = new URL(tokenRequest.path, baseUrl).href;
  const send = (nonce) => request(baseUrl, { ...tokenRequest, headers: { ...tokenRequest.headers, dpop: signProof(key, { htm: tokenRequest.method, htu, nonce }) } });
  const first = await send(undefined);
  return asksForNonce(first) ? send(first.headers['dpop-nonce']) : first;
}

/**
 * Scenario i's load: GET `path` with `Authorization: DPoP <accessToken>` and a proof of `key`'s per
 * request, on `connections` autocannon connections for `seconds`. The nonce comes from one read
 * without it (the server answers use_dpop_nonce and hands one out); one read with it must then
 * succeed before the proofs are signed. With `next` (issue 47), each proof is for the read next()
 * returns ({ path?, accessToken }: a token picked among several bound to `key`), picked while the
 * pool is signed, so the run itself only hands out what was made.
 */
export async function dpopReadLoad({ baseUrl, read: { path, accessToken, key, next }, connections, seconds, expect = 200, rssMb }) {
  if (seconds > MAX_RUN_SECONDS) throw new Error(`DPoP reads: a run of ${seconds} s would outlive its proofs' iat (at most ${MAX_RUN_SECONDS} s)`);
  const url = new URL(path, baseUrl);
  const readKey = `${url.origin}${path}`;
  /** One read's path and headers, the proof made now with `nonce` and `iat`. */
  const readOf = (read, nonce, iat) => {
    const readPath = read.path ?? path;
    const readUrl = new URL(readPath, baseUrl);
    const proof = signProof(key, { htm: 'GET', htu: `${readUrl.origin}${readUrl.pathname}`, accessToken: read.accessToken, nonce, iat });
    return { path: readPath, headers: { authorization: `DPoP ${read.accessToken}`, dpop: proof } };
  };
  const pick = next ?? (() => ({ path, accessToken }));
  const readWith = (nonce) => request(baseUrl, readOf({ path, accessToken }, nonce));

  const probe = await readWith(undefined);
  if (!asksForNonce(probe)) throw new Error(`DPoP read without a nonce: expected use_dpop_nonce with a DPoP-Nonce header, got ${probe.status} ${probe.body.slice(0, 300)}`);
  const nonce = probe.headers['dpop-nonce'];
  const check = await readWith(nonce);
  if (check.status !== expect) throw new Error(`DPoP read with the server's nonce: expected ${expect}, got ${check.status} ${check.body.slice(0, 300)}`);

  const size = Math.ceil((ratesSeen.get(readKey) ?? FIRST_GUESS_RPS) * seconds * SAFETY) + 2 * connections;
  // The middle of the run: the signing below takes a few seconds, then the run `seconds`.
  const iat = Math.floor(Date.now() / 1000 + seconds / 2);
  const reads = Array.from({ length: size }, () => readOf(pick(), nonce, iat));
  let nextRead = 0;
  let signedInline = 0;
  const handOut = () => {
    if (nextRead < reads.length) {
      const read = reads[nextRead];
      reads[nextRead++] = undefined;
      return read;
    }
    signedInline++;
    return readOf(pick(), nonce);
  };

  // The load generator's own CPU during the run (this process: autocannon and the proof handout).
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  const result = await varyingRequestLoad({ baseUrl, request: { method: 'GET', path }, next: handOut, connections, seconds, expect, rssMb });
  const cpu = process.cpuUsage(cpuBefore);
  const loadCpuPct = ((cpu.user + cpu.system) / 1000 / (performance.now() - wallBefore)) * 100;
  ratesSeen.set(readKey, Math.max(ratesSeen.get(readKey) ?? 0, result.requests / seconds));
  if (signedInline > 0) console.warn(`DPoP reads of ${readKey}: the ${size.toLocaleString('en')} proofs signed in advance ran out; ${signedInline.toLocaleString('en')} were signed during the run`);
  if (loadCpuPct > 80) console.warn(`DPoP reads of ${readKey}: the load generator was busy ${loadCpuPct.toFixed(0)}% of the run; it may be what limits the rate`);
  return { ...result, proofsSigned: size, proofsSignedInline: signedInline, loadCpuPct };
}
