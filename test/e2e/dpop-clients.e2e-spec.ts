/**
 * Clients and DPoP (RFC 9449) around the token endpoint: what a client's registration says about
 * DPoP and what the server makes of it.
 * - Metadata (RFC 9449 §5.1): both discovery documents list dpop_signing_alg_values_supported.
 * - dpop_bound_access_tokens (§5.2) through every way a client is registered: RFC 7591 /register
 *   with an administrator's clients:register token (stored, read back, checked, never combined
 *   with MAC tokens), RFC 7592 self-management (a client may turn it on, never off, and a refusal
 *   leaves its row untouched), an administrator's update (may turn it off), and the CLI's
 *   `clients:create --dpop-bound`.
 * - Enforcement at /token: a DPoP-bound client without a proof is refused invalid_dpop_proof and
 *   gets a DPoP token with one; a MAC client sending a proof is refused invalid_request, nothing issued.
 * - Introspection (RFC 7662, RFC 9449 §6.2): a bound token reads token_type DPoP and cnf.jkt, the
 *   RFC 7638 thumbprint of the proof's key; a bearer token neither.
 * - Replay records (§11.1): an accepted proof leaves a jti_uses row (the replay table DPoP proofs
 *   share with other single-use JWTs), so its replay is refused; the purge removes the row once the
 *   proof's iat has left the window, while a live record stays.
 * Proofs are made here with jose, so the test knows each proof's jti and key; the server's nonce
 * (required by default, §8) is taken from the use_dpop_nonce answer and every DPoP-Nonce header.
 */
import { jest } from '@jest/globals';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createHash, randomUUID } from 'node:crypto';
import { PurgeService } from '../../src/housekeeping/purge.service.js';
import { JtiUseStore } from '../../src/replay/jti-use.store.js';
import { runCli } from '../helpers/cli.js';
import { introspect, tokenRequest, type TokenResult } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

const ISSUER = 'https://auth.example.test';

interface Reply {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
}

/** A DPoP key pair as a client holds it: the private key signs proofs, the public JWK goes in their header. */
interface ProofKey {
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
  /** RFC 7638 SHA-256 thumbprint of the public key: what cnf.jkt must be. */
  jkt: string;
}

/** A client registered over HTTP, with what the response showed once. */
interface Registered {
  id: string;
  secret: string;
  rat: string;
  json: Record<string, unknown>;
}

async function newKey(alg = 'ES256'): Promise<ProofKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg);
  const jwk = await exportJWK(publicKey);
  return { alg, privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}

/** Parses a CLI run that must succeed with one JSON document on stdout. */
function cliJson(result: { code: number | null; stdout: string; stderr: string }): Record<string, unknown> {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe('DPoP-bound clients (RFC 9449 §5.2): registration, enforcement, introspection and purge', () => {
  let app: TestApp;
  let admin: RegisteredClient;
  let adminToken: string;
  /** The newest DPoP-Nonce the server handed out (RFC 9449 §8). */
  let nonce: string | undefined;

  beforeAll(async () => {
    app = await TestApp.start({ ISSUER, RATE_LIMIT_CLIENT_PER_MINUTE: '0', PURGE_INTERVAL_SECONDS: '0' });
    admin = await app.createClient({ name: 'admin', redirectUris: [], grantTypes: ['client_credentials'], scope: 'clients:register' });
    const result = await tokenRequest(app, admin, { grant_type: 'client_credentials' });
    expect(result.status).toBe(200);
    adminToken = result.body.access_token as string;
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => app?.stop());

  /** A proof for `method` on `path` (htu under the issuer), with the current nonce; `accessToken` adds ath (§4.2). */
  async function proofFor(key: ProofKey, method: string, path: string, accessToken?: string): Promise<{ jwt: string; jti: string }> {
    const jti = randomUUID();
    const claims: Record<string, unknown> = { jti, htm: method, htu: `${ISSUER}${path}`, iat: Math.floor(Date.now() / 1000) };
    if (nonce !== undefined) claims.nonce = nonce;
    if (accessToken !== undefined) claims.ath = createHash('sha256').update(accessToken).digest('base64url');
    const jwt = await new SignJWT(claims).setProtectedHeader({ typ: 'dpop+jwt', alg: key.alg, jwk: key.jwk }).sign(key.privateKey);
    return { jwt, jti };
  }

  /** Keeps the newest nonce a response carries. */
  function remember(headers: Headers): void {
    nonce = headers.get('dpop-nonce') ?? nonce;
  }

  /**
   * POST /token with a fresh proof; when the server asks for its nonce (use_dpop_nonce), once more
   * with it, as clients do (RFC 9449 §8). Returns the last answer and the jti of the last proof.
   */
  async function dpopTokenRequest(client: RegisteredClient, params: Record<string, string>, key: ProofKey): Promise<TokenResult & { jti: string }> {
    let proof = await proofFor(key, 'POST', '/token');
    let result = await tokenRequest(app, client, params, { dpop: proof.jwt });
    remember(result.headers);
    if (result.status === 400 && result.body.error === 'use_dpop_nonce') {
      proof = await proofFor(key, 'POST', '/token');
      result = await tokenRequest(app, client, params, { dpop: proof.jwt });
      remember(result.headers);
    }
    return { ...result, jti: proof.jti };
  }

  /** A request with a JSON body (or none) and the given Authorization and DPoP headers. */
  async function call(method: string, path: string, authorization: string, body?: unknown, extra: Record<string, string> = {}): Promise<Reply> {
    const response = await fetch(app.url(path), {
      method,
      headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...extra },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  async function register(metadata: Record<string, unknown>): Promise<Registered> {
    const reply = await call('POST', '/register', `Bearer ${adminToken}`, metadata);
    expect(reply.status).toBe(201);
    return { id: reply.json.client_id as string, secret: reply.json.client_secret as string, rat: reply.json.registration_access_token as string, json: reply.json };
  }

  const asClient = (registered: Registered): RegisteredClient => ({ clientId: registered.id, clientSecret: registered.secret, redirectUri: '' });

  const placeholder = () => (app.dataSource.options.type === 'postgres' ? '$1' : '?');

  /** The client's row as stored, every column. */
  async function row(id: string): Promise<Record<string, unknown>> {
    const rows = await app.dataSource.query<Record<string, unknown>[]>(`SELECT * FROM "clients" WHERE "id" = ${placeholder()}`, [id]);
    return rows[0];
  }

  /** The client's stored OpenID settings (a JSON column; null: every default). */
  async function storedSettings(id: string): Promise<Record<string, unknown> | null> {
    const value = (await row(id)).openid_settings as string | null;
    return value === null ? null : (JSON.parse(value) as Record<string, unknown>);
  }

  const count = async (table: string, where = '', parameters: unknown[] = []): Promise<number> =>
    Number((await app.dataSource.query<{ n: number | string }[]>(`SELECT COUNT(*) AS "n" FROM "${table}"${where}`, parameters))[0].n);
  const clientCount = () => count('clients');
  const tokenCount = (clientId: string) => count('tokens', ` WHERE "client_id" = ${placeholder()}`, [clientId]);
  const jtiUseCount = () => count('jti_uses');

  const SERVICE_METADATA = { client_name: 'Service', grant_types: ['client_credentials'], redirect_uris: [], scope: 'notes:read' };
  const APP_METADATA = { client_name: 'Notes App', redirect_uris: ['https://app.example/cb'], grant_types: ['authorization_code', 'refresh_token'], scope: 'notes:read' };

  describe('metadata', () => {
    it('lists dpop_signing_alg_values_supported, asymmetric algorithms only, in both discovery documents (RFC 9449 §5.1)', async () => {
      for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        const response = await fetch(app.url(path));
        expect(response.status).toBe(200);
        const metadata = (await response.json()) as Record<string, unknown>;
        expect(metadata.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'EdDSA', 'PS256', 'RS256']));
        const algorithms = metadata.dpop_signing_alg_values_supported as string[];
        expect(algorithms.filter((alg) => alg === 'none' || alg.startsWith('HS'))).toEqual([]);
      }
    });
  });

  describe('registration over HTTP (RFC 7591 /register, RFC 7592 GET)', () => {
    it('stores dpop_bound_access_tokens true and reads it back, to the client and to the administrator', async () => {
      const client = await register({ ...SERVICE_METADATA, dpop_bound_access_tokens: true });
      expect(client.json.dpop_bound_access_tokens).toBe(true);
      expect(await storedSettings(client.id)).toMatchObject({ dpopBoundAccessTokens: true });
      const path = new URL(client.json.registration_client_uri as string).pathname;
      expect(path).toBe(`/register/${client.id}`);
      for (const authorization of [`Bearer ${client.rat}`, `Bearer ${adminToken}`]) {
        const read = await call('GET', path, authorization);
        expect(read.status).toBe(200);
        expect(read.json).toMatchObject({ client_id: client.id, dpop_bound_access_tokens: true, access_token_type: 'bearer' });
      }
    });

    it('shows the default, false, when the client did not ask for it', async () => {
      // With other OpenID metadata, every default is shown (openIdMetadataOf).
      const withOpenId = await register({ ...APP_METADATA, subject_type: 'public' });
      expect(withOpenId.json.dpop_bound_access_tokens).toBe(false);
      const read = await call('GET', `/register/${withOpenId.id}`, `Bearer ${withOpenId.rat}`);
      expect(read.json.dpop_bound_access_tokens).toBe(false);
      // Explicitly false reads back false too.
      const explicit = await register({ ...APP_METADATA, dpop_bound_access_tokens: false });
      expect(explicit.json.dpop_bound_access_tokens).toBe(false);
      // With no OpenID metadata at all the client has every default; whether the field is shown or
      // omitted, it is not true (the PAR flag reads the same way).
      const plain = await register(APP_METADATA);
      expect(plain.json.dpop_bound_access_tokens ?? false).toBe(false);
      expect((await storedSettings(plain.id))?.dpopBoundAccessTokens ?? false).toBe(false);
    });

    it.each([
      ['the string "true"', 'true'],
      ['a number', 1],
      ['null', null],
      ['an object', { value: true }],
    ])('refuses %s as dpop_bound_access_tokens: 400 invalid_client_metadata, nothing written', async (_what, value) => {
      const before = await clientCount();
      const reply = await call('POST', '/register', `Bearer ${adminToken}`, { ...SERVICE_METADATA, dpop_bound_access_tokens: value });
      expect(reply.status).toBe(400);
      expect(reply.json).toEqual({ error: 'invalid_client_metadata', error_description: expect.stringContaining('dpop_bound_access_tokens') });
      expect(await clientCount()).toBe(before);
    });

    it('refuses dpop_bound_access_tokens with access_token_type "mac": 400 invalid_client_metadata, nothing written', async () => {
      const before = await clientCount();
      const reply = await call('POST', '/register', `Bearer ${adminToken}`, { ...SERVICE_METADATA, access_token_type: 'mac', dpop_bound_access_tokens: true });
      expect(reply.status).toBe(400);
      expect(reply.json).toEqual({ error: 'invalid_client_metadata', error_description: expect.stringMatching(/dpop_bound_access_tokens.*mac/) });
      expect(await clientCount()).toBe(before);
      // Each alone is fine.
      expect((await register({ ...SERVICE_METADATA, access_token_type: 'mac' })).json.access_token_type).toBe('mac');
      expect((await register({ ...SERVICE_METADATA, dpop_bound_access_tokens: true })).json.dpop_bound_access_tokens).toBe(true);
    });
  });

  describe('self-management (RFC 7592 PUT with the registration access token)', () => {
    const put = (client: Registered, authorization: string, change: Record<string, unknown>) =>
      call('PUT', `/register/${client.id}`, authorization, { ...SERVICE_METADATA, client_id: client.id, ...change });

    it('a client may turn dpop_bound_access_tokens on for itself: it narrows what the client can get', async () => {
      const client = await register(SERVICE_METADATA);
      const bearer = await tokenRequest(app, asClient(client), { grant_type: 'client_credentials' });
      expect(bearer.body.token_type).toBe('bearer');
      const reply = await put(client, `Bearer ${client.rat}`, { dpop_bound_access_tokens: true });
      expect(reply.status).toBe(200);
      expect(reply.json.dpop_bound_access_tokens).toBe(true);
      expect(await storedSettings(client.id)).toMatchObject({ dpopBoundAccessTokens: true });
      expect((await call('GET', `/register/${client.id}`, `Bearer ${client.rat}`)).json.dpop_bound_access_tokens).toBe(true);
      // And it holds at once: no more tokens without a proof.
      const refused = await tokenRequest(app, asClient(client), { grant_type: 'client_credentials' });
      expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 400, error: 'invalid_dpop_proof' });
    });

    it('a client may not turn it off, by false or by leaving it out: 400 invalid_client_metadata naming the field, and the row is unchanged', async () => {
      const client = await register({ ...SERVICE_METADATA, dpop_bound_access_tokens: true });
      const before = await row(client.id);
      expect(JSON.parse(before.openid_settings as string)).toMatchObject({ dpopBoundAccessTokens: true });
      // RFC 7592 §2.2: an update replaces the registration, so an omitted field takes its default, false.
      const attempts: Record<string, unknown>[] = [
        { dpop_bound_access_tokens: false },
        { dpop_bound_access_tokens: false, client_name: 'Renamed too' },
        {},
        { subject_type: 'public' },
      ];
      for (const change of attempts) {
        const reply = await put(client, `Bearer ${client.rat}`, change);
        expect(reply.status).toBe(400);
        expect(reply.json).toEqual({ error: 'invalid_client_metadata', error_description: expect.stringMatching(/^dpop_bound_access_tokens .*only an administrator/) });
        const after = await row(client.id);
        for (const column of Object.keys(before)) expect({ column, value: after[column] }).toEqual({ column, value: before[column] });
        expect(after).toEqual(before);
      }
      // Still enforced.
      const refused = await tokenRequest(app, asClient(client), { grant_type: 'client_credentials' });
      expect(refused.body.error).toBe('invalid_dpop_proof');
    });

    it('an administrator (another client\'s clients:register token) may turn it off; the client then gets bearer tokens again', async () => {
      const client = await register({ ...SERVICE_METADATA, dpop_bound_access_tokens: true });
      const reply = await put(client, `Bearer ${adminToken}`, { dpop_bound_access_tokens: false });
      expect(reply.status).toBe(200);
      expect(reply.json.dpop_bound_access_tokens).toBe(false);
      expect(await storedSettings(client.id)).toMatchObject({ dpopBoundAccessTokens: false });
      const bearer = await tokenRequest(app, asClient(client), { grant_type: 'client_credentials' });
      expect(bearer.status).toBe(200);
      expect(bearer.body.token_type).toBe('bearer');
      // The change is audited under the administrator's name.
      const events = await app.dataSource.query<{ actor: string; action: string }[]>(
        `SELECT "actor", "action" FROM "audit_events" WHERE "subject" = ${placeholder()} AND "action" = 'client.updated'`,
        [`client:${client.id}`],
      );
      expect(events).toEqual([{ actor: `client:${admin.clientId}`, action: 'client.updated' }]);
    });

    it('a DPoP-bound client holding clients:register cannot turn the requirement off on itself with its own access token: an administrator\'s token never manages its own client', async () => {
      const registrar = await register({ ...SERVICE_METADATA, scope: 'clients:register', dpop_bound_access_tokens: true });
      const key = await newKey();
      const tokens = await dpopTokenRequest(asClient(registrar), { grant_type: 'client_credentials' }, key);
      expect(tokens.status).toBe(200);
      expect(tokens.body.token_type).toBe('DPoP');
      const accessToken = tokens.body.access_token as string;
      const path = `/register/${registrar.id}`;
      const before = await row(registrar.id);
      const body = { ...SERVICE_METADATA, scope: 'clients:register', client_id: registrar.id, dpop_bound_access_tokens: false };
      const proof = await proofFor(key, 'PUT', path, accessToken);
      const reply = await call('PUT', path, `DPoP ${accessToken}`, body, { dpop: proof.jwt });
      remember(reply.headers);
      expect(reply.status).toBe(401);
      expect(reply.json.error).toBe('invalid_token');
      expect(await row(registrar.id)).toEqual(before);
      // The same token with a proof does register other clients (it is a working administrator token).
      const other = await call('POST', '/register', `DPoP ${accessToken}`, SERVICE_METADATA, { dpop: (await proofFor(key, 'POST', '/register', accessToken)).jwt });
      remember(other.headers);
      expect(other.status).toBe(201);
    });
  });

  describe('CLI', () => {
    it('clients:create --dpop-bound prints dpop_bound_access_tokens true, and the client must send proofs', async () => {
      const view = cliJson(await runCli(['clients:create', '--name', 'x', '--redirect-uri', 'https://x.example/cb', '--grant-type', 'client_credentials', '--scope', 'notes:read', '--dpop-bound']));
      expect(view).toMatchObject({ client_name: 'x', dpop_bound_access_tokens: true, access_token_type: 'bearer', client_secret: expect.any(String) });
      expect(await storedSettings(view.client_id as string)).toMatchObject({ dpopBoundAccessTokens: true });
      const client: RegisteredClient = { clientId: view.client_id as string, clientSecret: view.client_secret as string, redirectUri: 'https://x.example/cb' };
      const refused = await tokenRequest(app, client, { grant_type: 'client_credentials' });
      expect(refused.body.error).toBe('invalid_dpop_proof');
    }, 180_000);

    it('clients:create without --dpop-bound: dpop_bound_access_tokens is not true, and bearer tokens are issued', async () => {
      const view = cliJson(await runCli(['clients:create', '--name', 'x', '--redirect-uri', 'https://x.example/cb', '--grant-type', 'client_credentials', '--scope', 'notes:read']));
      expect(view.dpop_bound_access_tokens ?? false).toBe(false);
      // With any OpenID flag, every default is printed: false.
      const withOpenId = cliJson(await runCli(['clients:create', '--name', 'x', '--redirect-uri', 'https://x.example/cb', '--subject-type', 'public']));
      expect(withOpenId.dpop_bound_access_tokens).toBe(false);
      const client: RegisteredClient = { clientId: view.client_id as string, clientSecret: view.client_secret as string, redirectUri: 'https://x.example/cb' };
      const bearer = await tokenRequest(app, client, { grant_type: 'client_credentials' });
      expect(bearer.status).toBe(200);
      expect(bearer.body.token_type).toBe('bearer');
    }, 180_000);

    it('clients:create --dpop-bound --token-type mac is refused, and nothing is written', async () => {
      const before = await clientCount();
      const result = await runCli(['clients:create', '--name', 'x', '--grant-type', 'client_credentials', '--token-type', 'mac', '--dpop-bound']);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('dpop_bound_access_tokens');
      expect(await clientCount()).toBe(before);
    }, 180_000);
  });

  describe('enforcement at /token', () => {
    it('a client registered with dpop_bound_access_tokens gets 400 invalid_dpop_proof without a proof (nothing issued), and a DPoP token with one', async () => {
      const client = await app.createClient({ redirectUris: [], grantTypes: ['client_credentials'], scope: 'notes:read', openId: { dpop_bound_access_tokens: true } });
      const refused = await tokenRequest(app, client, { grant_type: 'client_credentials' });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: 'invalid_dpop_proof', error_description: expect.stringContaining('dpop_bound_access_tokens') });
      expect(await tokenCount(client.clientId)).toBe(0);

      const key = await newKey('EdDSA');
      const issued = await dpopTokenRequest(client, { grant_type: 'client_credentials' }, key);
      expect(issued.status).toBe(200);
      expect(issued.body).toMatchObject({ token_type: 'DPoP', access_token: expect.stringMatching(/^lk_at_/), scope: 'notes:read' });
      const rows = await app.dataSource.query<{ dpop_jkt: string | null }[]>(`SELECT "dpop_jkt" FROM "tokens" WHERE "client_id" = ${placeholder()}`, [client.clientId]);
      expect(rows).toEqual([{ dpop_jkt: key.jkt }]);
    });

    it('a client registered for MAC tokens that sends a DPoP proof gets 400 invalid_request; no token is written and the proof is not spent', async () => {
      const client = await app.createClient({ redirectUris: [], grantTypes: ['client_credentials'], scope: 'notes:read', accessTokenType: 'mac' as never });
      const key = await newKey();
      // Make sure the proof carries a valid nonce, so that only the client's token type can refuse it.
      if (nonce === undefined) await dpopTokenRequest(await app.createClient({ redirectUris: [], grantTypes: ['client_credentials'], scope: 'notes:read' }), { grant_type: 'client_credentials' }, key);
      const uses = await jtiUseCount();
      const proof = await proofFor(key, 'POST', '/token');
      const refused = await tokenRequest(app, client, { grant_type: 'client_credentials' }, { dpop: proof.jwt });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/MAC/) });
      expect(refused.body.access_token).toBeUndefined();
      expect(await tokenCount(client.clientId)).toBe(0);
      expect(await jtiUseCount()).toBe(uses);
      // Without a proof it gets its MAC token as before.
      const mac = await tokenRequest(app, client, { grant_type: 'client_credentials' });
      expect(mac.status).toBe(200);
      expect(mac.body.token_type).toBe('mac');
    });
  });

  describe('introspection (RFC 7662, RFC 9449 §6.2)', () => {
    let introspector: RegisteredClient;
    let service: RegisteredClient;

    beforeAll(async () => {
      introspector = await app.createClient({ name: 'resource server', redirectUris: [], grantTypes: ['client_credentials'], scope: 'tokens:introspect' });
      service = await app.createClient({ redirectUris: [], grantTypes: ['client_credentials'], scope: 'notes:read' });
    });

    it('a DPoP-bound access token is active, token_type "DPoP", with cnf.jkt the RFC 7638 thumbprint of the proof key', async () => {
      const key = await newKey('ES256');
      const issued = await dpopTokenRequest(service, { grant_type: 'client_credentials' }, key);
      expect(issued.status).toBe(200);
      const answer = await introspect(app, introspector, issued.body.access_token as string);
      expect(answer).toMatchObject({ active: true, client_id: service.clientId, scope: 'notes:read', token_type: 'DPoP' });
      expect(answer.cnf).toEqual({ jkt: await calculateJwkThumbprint(key.jwk, 'sha256') });
      expect((answer.cnf as { jkt: string }).jkt).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it('a bearer access token has no cnf and token_type "bearer"', async () => {
      const issued = await tokenRequest(app, service, { grant_type: 'client_credentials' });
      expect(issued.body.token_type).toBe('bearer');
      const answer = await introspect(app, introspector, issued.body.access_token as string);
      expect(answer).toMatchObject({ active: true, client_id: service.clientId, token_type: 'bearer' });
      expect(answer).not.toHaveProperty('cnf');
    });
  });

  describe('replay records and the purge (RFC 9449 §11.1)', () => {
    it('an accepted proof leaves a jti_uses row that refuses its replay; the purge removes it once out of the window, and keeps a live one', async () => {
      const client = await app.createClient({ redirectUris: [], grantTypes: ['client_credentials'], scope: 'notes:read', openId: { dpop_bound_access_tokens: true } });
      const key = await newKey('PS256');
      const issued = await dpopTokenRequest(client, { grant_type: 'client_credentials' }, key);
      expect(issued.status).toBe(200);
      // The row is the SHA-256 of the kind, the signer (the key's thumbprint) and the proof's jti (jti-use.store.ts).
      const useHash = (signer: string, jti: string) => createHash('sha256').update(`dpop_proof\n${signer}\n${jti}`).digest('hex');
      const proofHash = useHash(key.jkt, issued.jti);
      const uses = async (hash: string) => count('jti_uses', ` WHERE "use_hash" = ${placeholder()}`, [hash]);
      expect(await uses(proofHash)).toBe(1);

      // A live record, written as the verifier writes one, that expires well after the purge's cutoff.
      const liveJti = randomUUID();
      expect(await app.app.get(JtiUseStore).use('dpop_proof', key.jkt, liveJti, new Date(Date.now() + 3 * 86_400_000))).toBe(true);
      const live = useHash(key.jkt, liveJti);

      // Now: nothing has left the window yet, nothing of ours goes.
      await app.app.get(PurgeService).purge();
      expect(await uses(proofHash)).toBe(1);

      // A day later (past the proof's iat + 60 s and the grace): the proof's record goes, the live one stays.
      jest.spyOn(app.clock, 'now').mockReturnValue(new Date(Date.now() + 86_400_000));
      const result = await app.app.get(PurgeService).purge();
      expect(result.jtiUses).toBeGreaterThanOrEqual(1);
      expect(await uses(proofHash)).toBe(0);
      expect(await uses(live)).toBe(1);
    });

    it('the same proof sent twice is refused the second time (already used), and nothing more is issued', async () => {
      const client = await app.createClient({ redirectUris: [], grantTypes: ['client_credentials'], scope: 'notes:read' });
      const key = await newKey();
      const first = await dpopTokenRequest(client, { grant_type: 'client_credentials' }, key);
      expect(first.status).toBe(200);
      const proof = await proofFor(key, 'POST', '/token');
      expect((await tokenRequest(app, client, { grant_type: 'client_credentials' }, { dpop: proof.jwt })).status).toBe(200);
      const tokens = await tokenCount(client.clientId);
      const replay = await tokenRequest(app, client, { grant_type: 'client_credentials' }, { dpop: proof.jwt });
      expect(replay.status).toBe(400);
      expect(replay.body).toEqual({ error: 'invalid_dpop_proof', error_description: expect.stringContaining('already used') });
      expect(await tokenCount(client.clientId)).toBe(tokens);
    });
  });
});
