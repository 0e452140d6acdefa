/**
 * Issue 36, idempotent refresh: a rotated refresh token presented again by the same client with the
 * same request within REFRESH_REUSE_GRACE_SECONDS answers the first use's successor pair (one
 * chain), sequentially, concurrently and across three instances of one database; after the window,
 * once the successor has been used, with another request, another DPoP key or by another client it
 * is what it was before the grace: reuse (RFC 9700 §4.14.2) or a refusal. The pair is kept sealed, never in plaintext.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHash, randomUUID } from 'node:crypto';
import { IsNull } from 'typeorm';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { Clock } from '../../src/common/clock.js';
import { Token } from '../../src/tokens/token.entity.js';
import { obtainTokens } from '../helpers/api-client.js';
import { basicAuth, obtainCode, tokenRequest, type TokenResult } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { startAnotherInstance } from '../helpers/app-at-issuer.js';

const GRACE_SECONDS = 5;
const ISSUER = 'https://auth.example.test';
const PARALLEL = 5;

interface ProofKey {
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  jwk: JWK;
  jkt: string;
}

async function newKey(): Promise<ProofKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}

/** A fresh DPoP proof for POST /token (RFC 9449 §4.2). */
function proof(key: ProofKey): Promise<string> {
  const claims = { jti: randomUUID(), htm: 'POST', htu: `${ISSUER}/token`, iat: Math.floor(Date.now() / 1000) };
  return new SignJWT(claims).setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk }).sign(key.privateKey);
}

const sha256Hex = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex');

/** What makes two token answers the same pair (an ID token, if any, is new each time). */
function pairOf(reply: TokenResult): Record<string, unknown> {
  const { access_token, refresh_token, token_type, scope, mac_key, mac_algorithm } = reply.body;
  return { status: reply.status, access_token, refresh_token, token_type, scope, mac_key, mac_algorithm };
}

describe('refresh token grace (issue 36): the same request again answers the same pair', () => {
  let app: TestApp;
  const others: NestFastifyApplication[] = [];
  /** The three instances' base URLs. */
  const bases: string[] = [];
  let user: TestUser;
  let client: RegisteredClient;
  let otherClient: RegisteredClient;

  beforeAll(async () => {
    app = await TestApp.start({ ISSUER, REFRESH_REUSE_GRACE_SECONDS: String(GRACE_SECONDS), RATE_LIMIT_CLIENT_PER_MINUTE: '0', DPOP_NONCE_REQUIRED: 'false' });
    bases.push(app.baseUrl);
    // Two more instances on the same database, as behind a load balancer.
    for (let i = 0; i < 2; i++) {
      const { nest, baseUrl } = await startAnotherInstance();
      others.push(nest);
      bases.push(baseUrl);
    }
    user = await app.createUser();
    client = await app.createClient();
    otherClient = await app.createClient();
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    for (const nest of others) await nest.close();
    await app?.stop();
  });

  /** POST /token at instance `at` as `by` (Basic, or client_id for a public client). */
  async function refresh(by: RegisteredClient, refreshToken: string, options: { at?: number; dpop?: string; extra?: Record<string, string> } = {}): Promise<TokenResult> {
    const form: Record<string, string> = { grant_type: 'refresh_token', refresh_token: refreshToken, ...options.extra };
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (by.clientSecret) headers.authorization = basicAuth(by.clientId, by.clientSecret);
    else form.client_id = by.clientId;
    if (options.dpop) headers.dpop = options.dpop;
    const response = await fetch(`${bases[options.at ?? 0]}/token`, { method: 'POST', headers, body: new URLSearchParams(form).toString() });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
  }

  async function refreshToken(by = client, scope = 'notes:read notes:write'): Promise<string> {
    return (await obtainTokens(app, by, user, scope)).refreshToken!;
  }

  const stored = (value: string): Promise<Token> => app.dataSource.getRepository(Token).findOneByOrFail({ tokenHash: sha256Hex(value) });

  /** The family's live refresh tokens (unrotated, unrevoked): one chain has exactly one. */
  async function liveRefreshTokens(familyId: string): Promise<number> {
    return app.dataSource.getRepository(Token).count({ where: { familyId, kind: 'refresh', consumedAt: IsNull(), revokedAt: IsNull() } });
  }

  async function familyRevoked(value: string): Promise<boolean> {
    const rows = await app.dataSource.getRepository(Token).findBy({ familyId: (await stored(value)).familyId });
    return rows.every((row) => row.revokedAt !== null);
  }

  it('answers a repeat within the window with the same pair, and the chain goes on from it', async () => {
    const first = await refreshToken();
    const once = await refresh(client, first);
    const again = await refresh(client, first);
    expect(once.status).toBe(200);
    expect(pairOf(again)).toEqual(pairOf(once));
    expect(again.headers.get('cache-control')).toBe('no-store');
    // expires_in counts from the rotation: never more than the first answer said.
    expect(again.body.expires_in as number).toBeLessThanOrEqual(once.body.expires_in as number);
    expect(await liveRefreshTokens((await stored(first)).familyId)).toBe(1);
    // The successor is the live head of the one chain: it rotates normally.
    expect((await refresh(client, once.body.refresh_token as string)).status).toBe(200);
  });

  it('keeps the pair sealed: neither successor appears in the rotated row', async () => {
    const first = await refreshToken();
    const once = await refresh(client, first);
    const row = await stored(first);
    expect(row.successor).toEqual(expect.stringMatching(/^v1\./));
    for (const value of [once.body.access_token, once.body.refresh_token, first] as string[]) {
      expect(row.successor).not.toContain(value);
      expect(row.successor).not.toContain(Buffer.from(value).toString('base64url'));
    }
  });

  it(`answers ${PARALLEL} concurrent first uses with one pair: one chain, not ${PARALLEL}`, async () => {
    const first = await refreshToken();
    const replies = await Promise.all(Array.from({ length: PARALLEL }, () => refresh(client, first)));
    for (const reply of replies) expect(pairOf(reply)).toEqual(pairOf(replies[0]));
    expect(replies[0].status).toBe(200);
    const familyId = (await stored(first)).familyId;
    expect(await liveRefreshTokens(familyId)).toBe(1);
    // Only the winner's successors were stored: the first grant's two tokens and one rotation's two.
    expect(await app.dataSource.getRepository(Token).countBy({ familyId })).toBe(4);
  });

  it('answers a race across three instances of one database with one pair', async () => {
    const first = await refreshToken();
    const replies = await Promise.all(Array.from({ length: 3 * 3 }, (_, i) => refresh(client, first, { at: i % 3 })));
    for (const reply of replies) expect(pairOf(reply)).toEqual(pairOf(replies[0]));
    expect(replies[0].status).toBe(200);
    expect(await liveRefreshTokens((await stored(first)).familyId)).toBe(1);
    // And a repeat later, at each instance, still within the window: the same pair.
    for (const at of [0, 1, 2]) expect(pairOf(await refresh(client, first, { at }))).toEqual(pairOf(replies[0]));
  });

  it('treats a repeat after the window as reuse: the family is revoked, the successor too', async () => {
    const first = await refreshToken();
    const once = await refresh(client, first);
    const later = new Date(Date.now() + (GRACE_SECONDS + 1) * 1000);
    jest.spyOn(app.app.get(Clock), 'now').mockImplementation(() => later);
    const again = await refresh(client, first);
    expect({ status: again.status, error: again.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
    expect(await familyRevoked(first)).toBe(true);
    jest.restoreAllMocks();
    expect((await refresh(client, once.body.refresh_token as string)).body.error).toBe('invalid_grant');
  });

  it('treats a repeat within the window as reuse once the successor has been used (issue 43): the family is revoked, the newest pair too', async () => {
    const first = await refreshToken();
    const once = await refresh(client, first, { at: 0 });
    const next = await refresh(client, once.body.refresh_token as string, { at: 1 });
    expect([once.status, next.status]).toEqual([200, 200]);
    const again = await refresh(client, first, { at: 2 });
    expect({ status: again.status, error: again.body.error, refresh_token: again.body.refresh_token }).toEqual({ status: 400, error: 'invalid_grant', refresh_token: undefined });
    expect(await familyRevoked(first)).toBe(true);
    expect((await refresh(client, next.body.refresh_token as string)).body.error).toBe('invalid_grant');
  });

  it('treats another request within the window (a narrower scope) as reuse', async () => {
    const first = await refreshToken();
    expect((await refresh(client, first)).status).toBe(200);
    expect((await refresh(client, first, { extra: { scope: 'notes:read' } })).body.error).toBe('invalid_grant');
    expect(await familyRevoked(first)).toBe(true);
  });

  it("refuses another client presenting the rotated token, and gives it nothing: the owner's grant is untouched", async () => {
    const first = await refreshToken();
    const once = await refresh(client, first);
    const stolen = await refresh(otherClient, first);
    expect({ status: stolen.status, error: stolen.body.error, refresh_token: stolen.body.refresh_token }).toEqual({ status: 400, error: 'invalid_grant', refresh_token: undefined });
    expect(await familyRevoked(first)).toBe(false);
    expect((await refresh(client, once.body.refresh_token as string)).status).toBe(200);
  });

  it('repeats a MAC token pair with the same mac_key (the successor keeps its key binding)', async () => {
    const macClient = await app.createClient({ accessTokenType: 'mac' });
    const first = await refreshToken(macClient);
    const once = await refresh(macClient, first);
    expect(once.body).toMatchObject({ token_type: 'mac', mac_key: expect.any(String) });
    expect(pairOf(await refresh(macClient, first, { at: 1 }))).toEqual(pairOf(once));
  });

  describe('a DPoP-bound refresh token (RFC 9449 §5)', () => {
    let publicClient: RegisteredClient;
    beforeAll(async () => {
      publicClient = await app.createClient({ isPublic: true, redirectUris: ['http://127.0.0.1:7000/cb'] });
    });

    async function boundRefreshToken(key: ProofKey): Promise<string> {
      const { code, pkce } = await obtainCode(app, publicClient, user, { scope: 'notes:read' });
      const reply = await tokenRequest(app, publicClient, { grant_type: 'authorization_code', code, redirect_uri: publicClient.redirectUri, code_verifier: pkce.verifier, client_id: publicClient.clientId }, { dpop: await proof(key) });
      expect(reply.body.token_type).toBe('DPoP');
      const value = reply.body.refresh_token as string;
      expect((await stored(value)).dpopJkt).toBe(key.jkt);
      return value;
    }

    it('repeats the pair for a fresh proof made with the same key', async () => {
      const key = await newKey();
      const first = await boundRefreshToken(key);
      const once = await refresh(publicClient, first, { dpop: await proof(key) });
      expect(once.status).toBe(200);
      expect(pairOf(await refresh(publicClient, first, { dpop: await proof(key), at: 2 }))).toEqual(pairOf(once));
      expect((await stored(once.body.refresh_token as string)).dpopJkt).toBe(key.jkt);
    });

    it('treats a proof made with another key as theft: the family is revoked', async () => {
      const key = await newKey();
      const first = await boundRefreshToken(key);
      expect((await refresh(publicClient, first, { dpop: await proof(key) })).status).toBe(200);
      const thief = await refresh(publicClient, first, { dpop: await proof(await newKey()) });
      expect({ status: thief.status, error: thief.body.error, access_token: thief.body.access_token }).toEqual({ status: 400, error: 'invalid_grant', access_token: undefined });
      expect(await familyRevoked(first)).toBe(true);
    });

    it('treats a repeat without a proof as reuse too', async () => {
      const key = await newKey();
      const first = await boundRefreshToken(key);
      expect((await refresh(publicClient, first, { dpop: await proof(key) })).status).toBe(200);
      expect((await refresh(publicClient, first)).body.error).toBe('invalid_grant');
      expect(await familyRevoked(first)).toBe(true);
    });
  });
});
