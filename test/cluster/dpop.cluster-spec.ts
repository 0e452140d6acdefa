/**
 * DPoP (RFC 9449) on three instances behind nginx: a DPoP-bound token is worth nothing without its
 * key on every instance, a proof is accepted once whichever instances it is sent to (one INSERT
 * into jti_uses, also when they race), and a server nonce handed out by one instance is
 * accepted by the others (an HMAC of the rotation period under a key shared through server_keys,
 * nothing written per request). Run by scripts/test-cluster.mjs; this file never stops PostgreSQL.
 *
 * oauth4webapi, unmodified, goes through nginx as a client would. The other tests address one
 * instance in particular: they talk to its own port as nginx does (plain http from loopback, which
 * TRUST_PROXY trusts, with the X-Forwarded-* headers deploy/nginx-proxy.conf sets), so the instance
 * that answers is the one the test chose, not the next in nginx's round robin.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createHash, randomUUID } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { Browser } from '../helpers/browser.js';
import { authorizationCodeGrant, getNotes, refreshTokenGrant } from '../helpers/dpop.js';
import { authorizationUrl } from '../helpers/oauth4webapi.js';
import { basicAuth, signIn } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { Cluster, type ClusterClient, withClusterLogs } from './support/cluster.js';
import { obtainCode } from './support/flow.js';
import type { Instance } from './support/instance.js';
import { TOPOLOGY } from './support/settings.js';
import { type Hop, recordingHops, requestTo, type Target, tally } from './support/target.js';

const REDIRECT_URI = 'https://app.example/callback';
const NOTES = '/api/v1/notes';
/** Where the instances record each accepted proof (src/replay/jti-use.entity.ts). */
const REPLAY_TABLE = 'jti_uses';

interface Answer {
  status: number;
  body: Record<string, unknown>;
  /** The DPoP-Nonce response header (RFC 9449 §8.1, §9). */
  nonce: string | null;
  challenge: string | null;
  /** The instance that answered (the one addressed, or the one the balancer names in X-Upstream). */
  servedBy: string;
}

/** A DPoP key as a client holds it: the private key signs, the public JWK goes in every proof's header. */
interface ProofKey {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

interface BoundToken {
  accessToken: string;
  key: ProofKey;
}

async function newProofKey(): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}

const ath = (accessToken: string) => createHash('sha256').update(accessToken).digest('base64url');

describe(`DPoP on three instances behind ${TOPOLOGY.label}`, () => {
  let cluster: Cluster;
  let web: ClusterClient;
  let resourceServer: ClusterClient;
  const alice: TestUser = { username: 'alice', password: 'correct horse battery staple' };

  const withLogs = withClusterLogs(() => cluster);
  const [a, b, c] = [0, 1, 2].map((i) => () => cluster.instances[i]);

  /** A hand-built proof (RFC 9449 §4.2) of `method` on `path`, for `accessToken` (ath) when given. */
  async function proof(key: ProofKey, method: string, path: string, options: { nonce?: string; accessToken?: string } = {}): Promise<string> {
    const claims: Record<string, unknown> = { jti: randomUUID(), htm: method, htu: `${cluster.issuer}${path}` };
    if (options.nonce !== undefined) claims.nonce = options.nonce;
    if (options.accessToken !== undefined) claims.ath = ath(options.accessToken);
    return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }).setIssuedAt().sign(key.privateKey);
  }

  /** One request to `target` (an instance on its own port, or the balancer: support/target.ts), with the DPoP headers of the answer. */
  async function request(target: Target, method: string, path: string, headers: Record<string, string>, form?: Record<string, string>): Promise<Answer> {
    const answer = await requestTo(cluster, target, method, path, headers, form);
    return { status: answer.status, body: answer.body, nonce: answer.headers.get('dpop-nonce'), challenge: answer.headers.get('www-authenticate'), servedBy: answer.servedBy };
  }

  /** GET /api/v1/notes with `Authorization: DPoP` and the given proof (or as a bearer token, without one). */
  function readNotes(target: Target, accessToken: string, dpopProof?: string): Promise<Answer> {
    if (dpopProof === undefined) return request(target, 'GET', NOTES, { authorization: `Bearer ${accessToken}` });
    return request(target, 'GET', NOTES, { authorization: `DPoP ${accessToken}`, dpop: dpopProof });
  }

  /** POST /token as the web client with a proof of `key` carrying `nonce` (none when undefined). */
  async function tokenRequest(target: Target, form: Record<string, string>, key: ProofKey, nonce?: string): Promise<Answer> {
    return request(target, 'POST', '/token', { authorization: basicAuth(web.clientId, web.clientSecret), dpop: await proof(key, 'POST', '/token', { nonce }) }, form);
  }

  /** The nonce `target` hands out: a read with a proof that carries none is answered use_dpop_nonce with DPoP-Nonce (RFC 9449 §9). */
  async function nonceFrom(target: Target, token: BoundToken): Promise<string> {
    const answer = await readNotes(target, token.accessToken, await proof(token.key, 'GET', NOTES, { accessToken: token.accessToken }));
    expect(answer).toMatchObject({ status: 401, body: { error: 'use_dpop_nonce' }, nonce: expect.any(String) });
    expect(answer.challenge).toMatch(/^DPoP .*error="use_dpop_nonce"/);
    return answer.nonce!;
  }

  /**
   * Alice's DPoP-bound token, issued by `issuer` alone: the sign-in goes through nginx, the code
   * is redeemed on `issuer`, first without a nonce (use_dpop_nonce; the code is not spent), then with
   * the nonce it handed out.
   */
  async function boundTokenFrom(issuer: Instance): Promise<BoundToken> {
    const key = await newProofKey();
    const { code, verifier } = await obtainCode(cluster.baseUrl, web, alice);
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier };
    const first = await tokenRequest(issuer, form, key);
    expect(first).toMatchObject({ status: 400, body: { error: 'use_dpop_nonce' }, nonce: expect.any(String), servedBy: issuer.name });
    const issued = await tokenRequest(issuer, form, key, first.nonce!);
    expect(issued).toMatchObject({ status: 200, body: { token_type: 'DPoP', access_token: expect.any(String) }, servedBy: issuer.name });
    return { accessToken: String(issued.body.access_token), key };
  }

  const introspect = async (token: string) =>
    (await request('balancer', 'POST', '/introspect', { authorization: basicAuth(resourceServer.clientId, resourceServer.clientSecret) }, { token })).body;

  beforeAll(async () => {
    cluster = await Cluster.start(3);
    cluster.createUser(alice.username, alice.password);
    web = cluster.createClient('DPoP application', ['authorization_code', 'refresh_token'], 'notes:read notes:write', REDIRECT_URI);
    resourceServer = cluster.createClient('Resource server', ['client_credentials'], 'tokens:introspect');
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it(`runs the code flow with PKCE and a DPoP key, a read and a refresh through ${TOPOLOGY.balancerName} with oauth4webapi unmodified`, withLogs(async () => {
    const hops: Hop[] = [];
    const options = recordingHops(hops);
    const issuer = new URL(cluster.issuer);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...options }));
    expect(as.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256']));
    const client: oauth.Client = { client_id: web.clientId };
    const auth = oauth.ClientSecretBasic(web.clientSecret);
    const keys = await oauth.generateKeyPair('ES256');
    const dpop = oauth.DPoP(client, keys);

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = authorizationUrl(as, { client_id: client.client_id, response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'notes:read', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const callback = oauth.validateAuthResponse(as, client, await signIn(alice, url, new Browser(cluster.baseUrl)), state);

    hops.length = 0;
    const tokens = await authorizationCodeGrant(as, client, auth, callback, REDIRECT_URI, verifier, { DPoP: dpop, ...options });
    expect(tokens).toMatchObject({ token_type: 'dpop', scope: 'notes:read', refresh_token: expect.any(String) });
    // One use_dpop_nonce round: the balancer sent the retry to the next instance, which took the first one's nonce.
    expect(hops.map((h) => `${h.step} ${h.status}`)).toEqual(['POST /token 400', 'POST /token 200']);
    expect(cluster.instanceOf(hops[1].upstream)).not.toBe(cluster.instanceOf(hops[0].upstream));
    // Bound to the client's key, as any instance reports it (RFC 9449 §6.2).
    const jkt = await calculateJwkThumbprint(await exportJWK(keys.publicKey), 'sha256');
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt } });

    const read = await getNotes(issuer, tokens.access_token, { DPoP: dpop, ...options });
    expect(read.status).toBe(200);

    const refreshed = await refreshTokenGrant(as, client, auth, tokens.refresh_token!, { DPoP: dpop, ...options });
    expect(refreshed).toMatchObject({ token_type: 'dpop', refresh_token: expect.any(String) });
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    const readAgain = await getNotes(issuer, refreshed.access_token, { DPoP: dpop, ...options });
    expect(readAgain.status).toBe(200);

    // The library's nonce was good on every instance: no further use_dpop_nonce round.
    expect(hops.map((h) => `${h.step} ${h.status}`)).toEqual(['POST /token 400', 'POST /token 200', 'GET /api/v1/notes 200', 'POST /token 200', 'GET /api/v1/notes 200']);
    expect(new Set(hops.map((h) => cluster.instanceOf(h.upstream)?.name))).toEqual(new Set(cluster.instances.map((i) => i.name)));
  }));

  it('a bound token issued by one instance, stolen: refused by another as a bearer token and with a proof of another key, accepted with its own key', withLogs(async () => {
    const token = await boundTokenFrom(a());
    expect(await introspect(token.accessToken)).toMatchObject({ active: true, cnf: { jkt: token.key.jkt } });
    const nonce = await nonceFrom(b(), token);

    const asBearer = await readNotes(b(), token.accessToken);
    expect(asBearer).toMatchObject({ status: 401, body: { error: 'invalid_token' } });
    expect(asBearer.challenge).toMatch(/^Bearer .*error="invalid_token"/);

    // Everything right (nonce, htu, ath) but the key.
    const thief = await newProofKey();
    const thiefProof = await proof(thief, 'GET', NOTES, { nonce, accessToken: token.accessToken });
    const withThiefProof = await readNotes(b(), token.accessToken, thiefProof);
    expect(withThiefProof).toMatchObject({ status: 401, body: { error: 'invalid_dpop_proof', error_description: 'The DPoP proof is not made with the key this token is bound to' } });
    expect(withThiefProof.challenge).toMatch(/^DPoP .*error="invalid_dpop_proof"/);

    const withOwnKey = await readNotes(b(), token.accessToken, await proof(token.key, 'GET', NOTES, { nonce, accessToken: token.accessToken }));
    expect(withOwnKey).toMatchObject({ status: 200, servedBy: b().name });
    expect((await readNotes(c(), token.accessToken, await proof(token.key, 'GET', NOTES, { nonce, accessToken: token.accessToken }))).status).toBe(200);
  }));

  it('a proof accepted by one instance is refused by the others, and by itself, when replayed', withLogs(async () => {
    const token = await boundTokenFrom(a());
    const nonce = await nonceFrom(a(), token);
    const once = await proof(token.key, 'GET', NOTES, { nonce, accessToken: token.accessToken });

    expect(await readNotes(a(), token.accessToken, once)).toMatchObject({ status: 200, servedBy: a().name });
    for (const instance of [b(), c(), a()]) {
      const replay = await readNotes(instance, token.accessToken, once);
      expect(replay).toMatchObject({ status: 401, body: { error: 'invalid_dpop_proof', error_description: 'This DPoP proof was already used' }, servedBy: instance.name });
      expect(replay.challenge).toMatch(/^DPoP .*error="invalid_dpop_proof"/);
    }
    // A fresh proof of the same key is fine: it is the proof that is spent, not the token.
    expect((await readNotes(b(), token.accessToken, await proof(token.key, 'GET', NOTES, { nonce, accessToken: token.accessToken }))).status).toBe(200);
  }));

  it('one proof sent to all three instances at once, ten times over in parallel: exactly one request succeeds', withLogs(async () => {
    const token = await boundTokenFrom(b());
    const nonce = await nonceFrom(c(), token);

    const uses = async () => Number((await cluster.query<{ n: string }>(`SELECT count(*) AS n FROM ${REPLAY_TABLE}`))[0].n);
    const usesBefore = await uses();
    const once = await proof(token.key, 'GET', NOTES, { nonce, accessToken: token.accessToken });
    const answers = await Promise.all(Array.from({ length: 10 }, () => cluster.instances.map((instance) => readNotes(instance, token.accessToken, once))).flat());
    expect(answers).toHaveLength(30);
    expect(tally(answers)).toEqual({ '200': 1, '401 invalid_dpop_proof': 29 });
    expect(new Set(answers.map((r) => r.servedBy)).size).toBe(3);
    // The database recorded that one use, once, whichever instance won (nothing else runs meanwhile).
    expect(await uses()).toBe(usesBefore + 1);

    // Ten proofs raced at once, each sent to the three instances together: one winner per proof.
    const proofs = await Promise.all(Array.from({ length: 10 }, () => proof(token.key, 'GET', NOTES, { nonce, accessToken: token.accessToken })));
    const races = await Promise.all(proofs.map((p) => Promise.all(cluster.instances.map((instance) => readNotes(instance, token.accessToken, p)))));
    expect(races.map(tally)).toEqual(Array.from({ length: 10 }, () => ({ '200': 1, '401 invalid_dpop_proof': 2 })));
  }));

  it('a nonce handed out by one instance is accepted by the others, at the token endpoint and the data API', withLogs(async () => {
    // Token endpoint: the code is sent to A without a nonce, then to B with A's nonce.
    const key = await newProofKey();
    const { code, verifier } = await obtainCode(cluster.baseUrl, web, alice);
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier };
    const fromA = await tokenRequest(a(), form, key);
    expect(fromA).toMatchObject({ status: 400, body: { error: 'use_dpop_nonce' }, nonce: expect.any(String), servedBy: a().name });
    const onB = await tokenRequest(b(), form, key, fromA.nonce!);
    expect(onB).toMatchObject({ status: 200, body: { token_type: 'DPoP' }, servedBy: b().name });
    const token: BoundToken = { accessToken: String(onB.body.access_token), key };

    // Data API: every instance's nonce, used on each of the others.
    for (const giver of cluster.instances) {
      const nonce = await nonceFrom(giver, token);
      for (const taker of cluster.instances.filter((i) => i !== giver)) {
        const answer = await readNotes(taker, token.accessToken, await proof(key, 'GET', NOTES, { nonce, accessToken: token.accessToken }));
        expect({ giver: giver.name, taker: taker.name, status: answer.status, error: answer.body.error }).toEqual({ giver: giver.name, taker: taker.name, status: 200, error: undefined });
      }
    }
    // And a nonce no instance handed out is refused on every one: the acceptance above is not for any string.
    for (const instance of cluster.instances) {
      const answer = await readNotes(instance, token.accessToken, await proof(key, 'GET', NOTES, { nonce: 'bm90LWEtc2VydmVyLW5vbmNl', accessToken: token.accessToken }));
      expect(answer).toMatchObject({ status: 401, body: { error: 'use_dpop_nonce' }, nonce: expect.any(String) });
    }
  }));
});
