/**
 * Threat: someone obtains tokens as a private_key_jwt client without holding its private key
 * (RFC 7523 §2.2, §3; OpenID Connect Core §9; RFC 6819 §4.4.1.4): a captured assertion replayed,
 * claims that name someone else or no one, an assertion signed with no key, a shared secret, the
 * wrong key or a forbidden algorithm; a second credential slipped in beside the assertion; a key
 * set that is not a public signing key set; a jwks_uri that points the server at its own network
 * (SSRF) or answers garbage; a client's own registration access token turning it into a secret
 * client.
 * Defence: every assertion is a signed JWT of at most 8192 characters whose iss and sub are the
 * client_id, whose aud names this server, whose exp is near, and whose jti is accepted once; it is
 * checked against the keys the client registered, with asymmetric algorithms only (the one pinned
 * by token_endpoint_auth_signing_alg, if any). Each refusal is 401 invalid_client (RFC 7523 §3.2)
 * without a Basic challenge, and writes nothing: no token, no jti use. Registration accepts only
 * public asymmetric signing keys, and a jwks_uri is fetched through the SSRF-protected client.
 * Hand-built assertions (jose) over real HTTP; test/e2e/oauth4webapi-private-key-jwt.e2e-spec.ts
 * is the conforming library.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type JWK, type JWTPayload } from 'jose';
import { generateKeyPairSync, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NewClient } from '../../src/clients/client-information.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { basicAuth, tokenRequest, type TokenResult } from '../helpers/oauth-flow.js';
import { rsaKeyWithLargeExponent, type LargeExponentKey } from '../helpers/rsa-large-exponent.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';
import { withEnv } from '../helpers/with-env.js';

const ISSUER = 'https://auth.example.test';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const CLIENT_CREDENTIALS = { grant_type: 'client_credentials' };
/** The server's CLIENT_ASSERTION_MAX_LIFETIME_SECONDS default. */
const MAX_LIFETIME = 300;

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** A key pair; the public half as a JWK with kid, alg and use. */
interface SigningKey {
  privateKey: PrivateKey | KeyObject;
  publicJwk: JWK;
  alg: string;
  kid: string;
}

/** Who signs an assertion and with what: a client id and one of its keys (or someone else's). */
interface Signer {
  id: string;
  key: SigningKey;
}

interface Written {
  tokens: number;
  jtiUses: number;
  clients: number;
}

async function newKey(alg = 'ES256', kid = `k-${randomUUID()}`): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, alg, kid };
}

/** An RSA key as a node KeyObject, which signs with PS256 and RS256 alike; registered without alg. */
function newRsaKey(kid = `rsa-${randomUUID()}`): SigningKey {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey, publicJwk: { ...(publicKey.export({ format: 'jwk' }) as JWK), kid, use: 'sig' }, alg: 'PS256', kid };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

let largeExponent: LargeExponentKey | undefined;
/** One RSA key with a 3000-bit public exponent for the file (a few hundred ms to make), as a SigningKey signing PS256. */
function largeExponentKey(kid = 'large-e'): SigningKey {
  largeExponent ??= rsaKeyWithLargeExponent();
  return { privateKey: largeExponent.privateKey, publicJwk: { ...largeExponent.publicJwk, kid, use: 'sig' }, alg: 'PS256', kid };
}

/** The claims of a good assertion for `id`, with `claims` laid over them (undefined removes one). */
function claimsFor(id: string, claims: Record<string, unknown> = {}): JWTPayload {
  const now = nowSeconds();
  const all: Record<string, unknown> = { iss: id, sub: id, aud: ISSUER, iat: now, exp: now + 60, jti: randomUUID(), ...claims };
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined)) as JWTPayload;
}

/** A compact JWS signed by `signer`; `header` is laid over { alg, kid } (kid: undefined removes it). */
function assertion(signer: Signer, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
  const protectedHeader = Object.fromEntries(Object.entries({ alg: signer.key.alg, kid: signer.key.kid, ...header }).filter(([, value]) => value !== undefined));
  return new SignJWT(claimsFor(signer.id, claims)).setProtectedHeader(protectedHeader as { alg: string }).sign(signer.key.privateKey);
}

function withAssertion(jwt: string, form: Record<string, string> = CLIENT_CREDENTIALS): Record<string, string> {
  return { ...form, client_assertion_type: JWT_BEARER, client_assertion: jwt };
}

/** POST `form` to `base` + `path` as a form, exactly as given. */
async function postForm(base: string, path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<TokenResult> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { unparsed: text };
  }
  return { status: response.status, headers: response.headers, body };
}

/** A loopback HTTP server answering each path with its handler, counting the requests per path. */
class JwksServer {
  readonly routes = new Map<string, (response: ServerResponse) => void>();
  readonly hits = new Map<string, number>();
  private server?: Server;

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      // No keep-alive: outbound-http.ts uses Node's global agent, which would hand a socket pooled by
      // one app's fetch to another app's fetch of the same host and port, skipping the address check
      // that is made only when connecting (the SSRF block below has two apps in one process).
      response.setHeader('connection', 'close');
      const route = this.routes.get(path);
      if (route) route(response);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  url(path: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  serveJson(path: string, value: unknown, status = 200): void {
    this.routes.set(path, (response) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value)));
  }

  hitsOf(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  async stop(): Promise<void> {
    if (this.server) await new Promise((resolve) => this.server!.close(resolve));
  }
}

describe('private_key_jwt client assertions under attack (RFC 7523 §2.2, §3; OpenID Connect Core §9)', () => {
  let app: TestApp;
  let adminToken: string;
  const jwksServer = new JwksServer();
  /** Two private_key_jwt clients with inline key sets, and one pinned to ES256 with an RSA key besides. */
  let alice: Signer;
  let bob: Signer;
  let pinned: { id: string; ec: SigningKey; rsa: SigningKey };
  let basicClient: Required<RegisteredClient>;

  /** Registers a private_key_jwt client through ClientsService (client_credentials, notes:read and tokens:introspect). */
  async function keyClient(keys: NewClient['keys'], name = 'private_key_jwt client'): Promise<string> {
    const { client, secret } = await app.app.get(ClientsService).create({
      name,
      redirectUris: [],
      scope: 'notes:read tokens:introspect',
      grantTypes: ['client_credentials'] as NewClient['grantTypes'],
      tokenEndpointAuthMethod: 'private_key_jwt',
      keys,
    });
    expect(secret).toBeUndefined();
    return client.id;
  }

  async function inlineClient(alg = 'ES256'): Promise<Signer> {
    const key = await newKey(alg);
    return { id: await keyClient({ jwks: { keys: [key.publicJwk as never] } }), key };
  }

  const token = (form: Record<string, string>, headers: Record<string, string> = {}) => postForm(app.baseUrl, '/token', form, headers);

  async function written(): Promise<Written> {
    const count = async (table: string) => Number((await app.dataSource.query<{ n: string | number }[]>(`SELECT COUNT(*) AS "n" FROM "${table}"`))[0].n);
    return { tokens: await count('tokens'), jtiUses: await count('jti_uses'), clients: await count('clients') };
  }

  function expectToken(reply: TokenResult): void {
    expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: expect.objectContaining({ access_token: expect.stringMatching(/^lk_at_/) }) });
  }

  /** 401 invalid_client, no Basic challenge (RFC 7523 §3.2), the description matching, and nothing written. */
  async function expectRefused(send: () => Promise<TokenResult>, description?: RegExp): Promise<TokenResult> {
    const before = await written();
    const reply = await send();
    expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    expect(reply.headers.get('www-authenticate')).toBeNull();
    if (description) expect(reply.body.error_description).toMatch(description);
    expect(await written()).toEqual(before);
    return reply;
  }

  async function call(method: string, path: string, bearer: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(app.url(path), {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  /** The client's row as stored, every column. */
  async function row(id: string): Promise<Record<string, unknown>> {
    const placeholder = app.dataSource.options.type === 'postgres' ? '$1' : '?';
    return (await app.dataSource.query<Record<string, unknown>[]>(`SELECT * FROM "clients" WHERE "id" = ${placeholder}`, [id]))[0];
  }

  beforeAll(async () => {
    await jwksServer.start();
    app = await TestApp.start({ ISSUER, RATE_LIMIT_CLIENT_PER_MINUTE: '0' });
    const admin = await app.createClient({ name: 'admin', redirectUris: [], grantTypes: ['client_credentials'], scope: 'clients:register' });
    const issued = await tokenRequest(app, admin, CLIENT_CREDENTIALS);
    expect(issued.status).toBe(200);
    adminToken = issued.body.access_token as string;
    alice = await inlineClient();
    bob = await inlineClient();
    const ec = await newKey('ES256');
    const rsa = newRsaKey();
    pinned = { id: await keyClient({ jwks: { keys: [ec.publicJwk as never, rsa.publicJwk as never] }, token_endpoint_auth_signing_alg: 'ES256' }), ec, rsa };
    const basic = await app.createClient({ name: 'basic', redirectUris: [], grantTypes: ['client_credentials'], scope: 'notes:read', tokenEndpointAuthMethod: 'client_secret_basic' });
    basicClient = { ...basic, clientSecret: basic.clientSecret! };
  });
  afterAll(async () => {
    await app?.stop();
    await jwksServer.stop();
  });

  it('the control: a good assertion gets a token, and records its jti once', async () => {
    const before = await written();
    expectToken(await token(withAssertion(await assertion(alice))));
    expect(await written()).toEqual({ ...before, tokens: before.tokens + 1, jtiUses: before.jtiUses + 1 });
  });

  describe('RFC 7523 §3 item 7: a jti is accepted once', () => {
    it('refuses the same assertion a second time, at /token and at any other endpoint ("already used")', async () => {
      const jwt = await assertion(alice);
      expectToken(await token(withAssertion(jwt)));
      await expectRefused(() => token(withAssertion(jwt)), /already used/);
      await expectRefused(() => postForm(app.baseUrl, '/introspect', withAssertion(jwt, { token: 'lk_at_unknown' })), /already used/);
    });

    it('lets exactly one of 5 copies sent in parallel through', async () => {
      const jwt = await assertion(alice);
      const before = await written();
      const replies = await Promise.all(Array.from({ length: 5 }, () => token(withAssertion(jwt))));
      expect(replies.map((reply) => reply.status).sort()).toEqual([200, 401, 401, 401, 401]);
      for (const reply of replies.filter((r) => r.status === 401)) {
        expect(reply.body).toMatchObject({ error: 'invalid_client', error_description: expect.stringMatching(/already used/) });
      }
      expect(await written()).toEqual({ ...before, tokens: before.tokens + 1, jtiUses: before.jtiUses + 1 });
    });

    it('keeps the jtis of two clients apart: the same jti from another client is its own', async () => {
      const jti = randomUUID();
      expectToken(await token(withAssertion(await assertion(alice, { jti }))));
      expectToken(await token(withAssertion(await assertion(bob, { jti }))));
    });
  });

  describe('RFC 7523 §3 items 1–5: the claims', () => {
    const cases: [string, () => Promise<string>, RegExp][] = [
      ['iss another client than sub', () => assertion(alice, { iss: bob.id }), /iss/],
      ['iss missing', () => assertion(alice, { iss: undefined }), /iss/],
      ['sub another client\'s id (signed with the real client\'s key)', () => assertion(alice, { sub: bob.id }), /client assertion/],
      ['iss and sub both another client\'s id (signed with the real client\'s key)', () => assertion({ id: bob.id, key: alice.key }), /key/],
      ['sub missing', () => assertion(alice, { sub: undefined }), /sub/],
      ['sub a number', () => assertion(alice, { sub: 42 }), /sub/],
      ['sub an unknown client', () => assertion(alice, { sub: 'no-such-client', iss: 'no-such-client' }), /Client authentication failed/],
      ['aud another server', () => assertion(alice, { aud: 'https://other-as.example' }), /aud/],
      ['aud the issuer with a trailing slash', () => assertion(alice, { aud: `${ISSUER}/` }), /aud/],
      ['aud missing', () => assertion(alice, { aud: undefined }), /aud/],
      ['aud another endpoint\'s URL (/revoke, sent to /token)', () => assertion(alice, { aud: `${ISSUER}/revoke` }), /aud/],
      ['aud the /introspect URL, sent to /token', () => assertion(alice, { aud: `${ISSUER}/introspect` }), /aud/],
      ['exp missing', () => assertion(alice, { exp: undefined }), /exp/],
      ['exp a minute in the past', () => assertion(alice, { exp: nowSeconds() - 60, iat: nowSeconds() - 120 }), /expired/],
      ['exp more than 300 s ahead (400 s)', () => assertion(alice, { exp: nowSeconds() + 400 }), /at most 300 seconds/],
      ['exp just over 300 s ahead (310 s)', () => assertion(alice, { exp: nowSeconds() + MAX_LIFETIME + 10 }), /at most 300 seconds/],
      ['exp a string', () => assertion(alice, { exp: String(nowSeconds() + 60) }), /exp/],
      ['nbf in the future', () => assertion(alice, { nbf: nowSeconds() + 120 }), /nbf/],
      ['jti missing', () => assertion(alice, { jti: undefined }), /jti/],
      ['jti empty', () => assertion(alice, { jti: '' }), /jti/],
      ['jti a number', () => assertion(alice, { jti: 12345 }), /jti/],
      ['jti longer than 256 characters', () => assertion(alice, { jti: 'j'.repeat(257) }), /jti/],
    ];

    it.each(cases)('refuses an assertion with %s', async (_case, build, description) => {
      const jwt = await build();
      await expectRefused(() => token(withAssertion(jwt)), description);
    });

    it('accepts exp exactly 300 s ahead (the limit itself)', async () => {
      expectToken(await token(withAssertion(await assertion(alice, { exp: nowSeconds() + MAX_LIFETIME }))));
    });
  });

  describe('RFC 7523 §3 items 1–2 with draft-ietf-oauth-rfc7523bis: aud is the issuer, and nothing else', () => {
    const introspect = (jwt: string) => postForm(app.baseUrl, '/introspect', withAssertion(jwt, { token: 'lk_at_unknown' }));

    it.each([
      ['the issuer', () => ISSUER],
      ['an array holding the issuer alone', () => [ISSUER]],
    ])('accepts aud = %s at /introspect', async (_case, aud) => {
      const reply = await introspect(await assertion(alice, { aud: aud() }));
      expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: { active: false } });
    });

    // The audience injection: a malicious server that advertised our endpoint URLs as its own
    // receives assertions whose aud is one of them and replays them here. Only the issuer, which it
    // cannot claim, is accepted (Core §9's token endpoint URL included).
    it.each([
      ['the token endpoint URL, at /token', () => `${ISSUER}/token`, '/token'],
      ['the URL of the endpoint it is sent to, at /introspect', () => `${ISSUER}/introspect`, '/introspect'],
      ['the /revoke URL, at /revoke', () => `${ISSUER}/revoke`, '/revoke'],
    ])('refuses aud = %s', async (_case, aud, path) => {
      const jwt = await assertion(alice, { aud: aud() });
      await expectRefused(() => postForm(app.baseUrl, path, path === '/token' ? withAssertion(jwt) : withAssertion(jwt, { token: 'lk_at_unknown' })), /aud must be the issuer/);
    });

    it('refuses an aud array naming this server and another one', async () => {
      await expectRefused(async () => token(withAssertion(await assertion(alice, { aud: ['https://other-as.example', ISSUER] }))), /aud must be the issuer/);
    });
  });

  describe('RFC 7523 §3 item 9, RFC 7518 §3: the signature, with the client\'s own keys and asymmetric algorithms', () => {
    it('refuses alg "none" (an unsigned JWT)', async () => {
      const jwt = new UnsecuredJWT(claimsFor(alice.id)).encode();
      expect(jwt.endsWith('.')).toBe(true);
      await expectRefused(() => token(withAssertion(jwt)), /algorithm|signed JWT/);
    });

    it('refuses HS256, whether keyed with a random secret or with the client\'s public key (algorithm confusion)', async () => {
      for (const secret of [randomBytes(32), new TextEncoder().encode(JSON.stringify(alice.key.publicJwk))]) {
        const jwt = await new SignJWT(claimsFor(alice.id)).setProtectedHeader({ alg: 'HS256', kid: alice.key.kid }).sign(secret);
        await expectRefused(() => token(withAssertion(jwt)), /algorithm/);
      }
    });

    it('refuses an assertion as Alice signed with Bob\'s key: under Bob\'s kid, under Alice\'s kid, and without a kid', async () => {
      for (const header of [{ kid: bob.key.kid }, { kid: alice.key.kid }, { kid: undefined }]) {
        const jwt = await assertion({ id: alice.id, key: bob.key }, {}, header);
        await expectRefused(() => token(withAssertion(jwt)), /key|signature/);
      }
    });

    it('refuses an assertion signed with a fresh key nobody registered', async () => {
      const stranger = await newKey('ES256', alice.key.kid);
      await expectRefused(async () => token(withAssertion(await assertion({ id: alice.id, key: stranger }))), /signature/);
    });

    it('refuses a tampered payload (a valid signature over other claims)', async () => {
      const [header, , signature] = (await assertion(alice)).split('.');
      const payload = Buffer.from(JSON.stringify(claimsFor(alice.id))).toString('base64url');
      await expectRefused(() => token(withAssertion(`${header}.${payload}.${signature}`)), /signature/);
    });

    it('token_endpoint_auth_signing_alg ES256: accepts ES256, refuses PS256 and RS256 signed with the client\'s own registered RSA key', async () => {
      expectToken(await token(withAssertion(await assertion({ id: pinned.id, key: pinned.ec }))));
      for (const alg of ['PS256', 'RS256']) {
        const jwt = await assertion({ id: pinned.id, key: pinned.rsa }, {}, { alg, kid: undefined });
        await expectRefused(() => token(withAssertion(jwt)), /algorithm this client may not use/);
      }
    });
  });

  describe('RFC 7523 §3: what is not a client assertion', () => {
    it('refuses an assertion longer than 8192 characters, however well signed', async () => {
      const jwt = await assertion(alice, { padding: 'x'.repeat(9000) });
      expect(jwt.length).toBeGreaterThan(8192);
      await expectRefused(() => token(withAssertion(jwt)), /longer than 8192/);
    });

    it.each([
      ['a word', 'not-a-jwt'],
      ['three dots', '...'],
      ['three base64url parts of garbage', 'abc.def.ghi'],
      ['a JWE-shaped string (five parts)', 'a.b.c.d.e'],
    ])('refuses a non-JWT string: %s', async (_case, value) => {
      await expectRefused(() => token(withAssertion(value)), /not a JWT|not a valid signed JWT|sub/);
    });
  });

  describe('RFC 6749 §2.3, RFC 7521 §4.2: one authentication method per request', () => {
    it('refuses an assertion plus an Authorization: Basic header with invalid_request (400), even when the assertion is good', async () => {
      const jwt = await assertion(alice);
      const before = await written();
      const reply = await token(withAssertion(jwt), { authorization: basicAuth(alice.id, 'lk_cs_anything') });
      expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 400, error: 'invalid_request' });
      expect(await written()).toEqual(before);
      // Nothing consumed the jti: the same assertion alone still works.
      expectToken(await token(withAssertion(jwt)));
    });

    it('refuses an assertion plus client_secret in the body with invalid_request (400)', async () => {
      const before = await written();
      const reply = await token({ ...withAssertion(await assertion(alice)), client_id: alice.id, client_secret: 'lk_cs_anything' });
      expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 400, error: 'invalid_request' });
      expect(await written()).toEqual(before);
    });

    it('refuses another client_assertion_type (SAML 2.0 bearer) with invalid_client', async () => {
      const form = { ...withAssertion(await assertion(alice)), client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer' };
      await expectRefused(() => token(form), /client_assertion_type/);
    });

    it('refuses client_assertion_type without client_assertion with invalid_client', async () => {
      await expectRefused(() => token({ ...CLIENT_CREDENTIALS, client_assertion_type: JWT_BEARER }), /client_assertion is required/);
    });

    it('refuses client_assertion without client_assertion_type with invalid_client', async () => {
      await expectRefused(async () => token({ ...CLIENT_CREDENTIALS, client_assertion: await assertion(alice) }), /client_assertion_type/);
    });

    it('refuses a repeated client_assertion with invalid_request', async () => {
      const jwt = await assertion(alice);
      const before = await written();
      const body = `${new URLSearchParams(withAssertion(jwt)).toString()}&client_assertion=${jwt}`;
      const response = await fetch(app.url('/token'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
      expect({ status: response.status, error: ((await response.json()) as { error: string }).error }).toEqual({ status: 400, error: 'invalid_request' });
      expect(await written()).toEqual(before);
    });

    it('accepts a client_id that names the asserting client', async () => {
      expectToken(await token({ ...withAssertion(await assertion(alice)), client_id: alice.id }));
    });

    it('refuses a client_id naming another client beside a good assertion: 401 invalid_client without a Basic challenge, like every assertion refusal; the jti is consumed', async () => {
      const before = await written();
      const reply = await token({ ...withAssertion(await assertion(alice)), client_id: bob.id });
      expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 401, error: 'invalid_client' });
      expect(reply.body.error_description).toMatch(/client_id does not match/);
      expect(reply.headers.get('www-authenticate')).toBeNull();
      expect(await written()).toEqual({ ...before, jtiUses: before.jtiUses + 1 });
    });
  });

  describe('RFC 7591 §2, Core §9: only the registered method authenticates', () => {
    it('refuses a client_secret_basic client sending an assertion naming itself, validly signed by another client\'s registered key', async () => {
      await expectRefused(async () => token(withAssertion(await assertion({ id: basicClient.clientId, key: alice.key }))), /Client authentication failed/);
      // Its secret still works: nothing about the client changed.
      expectToken(await tokenRequest(app, basicClient, CLIENT_CREDENTIALS));
    });

    it('a private_key_jwt client registered over HTTP gets no secret, and a Basic header or client_secret with any secret is invalid_client', async () => {
      const key = await newKey('EdDSA');
      const registered = await call('POST', '/register', adminToken, {
        client_name: 'Key holder',
        grant_types: ['client_credentials'],
        scope: 'notes:read',
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [key.publicJwk] },
      });
      expect(registered.status).toBe(201);
      expect(registered.json).not.toHaveProperty('client_secret');
      expect(registered.json).not.toHaveProperty('client_secret_expires_at');
      const id = registered.json.client_id as string;
      expect((await row(id)).secret_hash).toBeNull();

      for (const secret of ['lk_cs_guessed', '', ' ']) {
        const before = await written();
        const reply = await token(CLIENT_CREDENTIALS, { authorization: basicAuth(id, secret) });
        expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 401, error: 'invalid_client' });
        // RFC 6749 §5.2: the client tried the Authorization header, so the answer carries the Basic challenge.
        expect(reply.headers.get('www-authenticate')).toMatch(/^Basic /);
        expect(await written()).toEqual(before);
      }
      // client_secret in the body (client_secret_post), or client_id alone (a public client): no authentication either.
      const forms: Record<string, string>[] = [{ client_id: id, client_secret: 'lk_cs_guessed' }, { client_id: id }];
      for (const form of forms) {
        const before = await written();
        const reply = await token({ ...CLIENT_CREDENTIALS, ...form });
        expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 401, error: 'invalid_client' });
        expect(await written()).toEqual(before);
      }
      // The control: its key does authenticate it.
      expectToken(await token(withAssertion(await assertion({ id, key }))));
    });
  });

  describe('RFC 7591 §2 (jwks, jwks_uri), RFC 7517, RFC 7518 §3.3: what a private_key_jwt client may register', () => {
    let good: SigningKey;
    const base = { client_name: 'Keys', grant_types: ['client_credentials'], scope: 'notes:read', token_endpoint_auth_method: 'private_key_jwt' };

    beforeAll(async () => {
      good = await newKey('ES256');
    });

    it('the control: a public ES256 key inline, or an http jwks_uri on loopback (development), is registered', async () => {
      for (const keys of [{ jwks: { keys: [good.publicJwk] } }, { jwks_uri: jwksServer.url('/registered.json') }]) {
        const reply = await call('POST', '/register', adminToken, { ...base, ...keys });
        expect(reply.status).toBe(201);
        expect(reply.json).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', ...keys });
      }
    });

    const cases: [string, () => Promise<Record<string, unknown>>][] = [
      ['neither jwks nor jwks_uri', async () => ({})],
      ['both jwks and jwks_uri', async () => ({ jwks: { keys: [good.publicJwk] }, jwks_uri: 'https://client.example/jwks.json' })],
      ['a jwks holding a private key ("d")', async () => ({ jwks: { keys: [{ ...(await exportJWK(good.privateKey)), kid: 'private' }] } })],
      ['a jwks holding a symmetric key (kty oct)', async () => ({ jwks: { keys: [{ kty: 'oct', k: randomBytes(32).toString('base64url'), alg: 'HS256' }] } })],
      ['a jwks holding an RSA key of 1024 bits', async () => ({ jwks: { keys: [{ ...generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' }), kid: 'small', alg: 'RS256' }] } })],
      ['a jwks holding an RSA key whose public exponent has 3000 bits (issue 30)', async () => ({ jwks: { keys: [largeExponentKey().publicJwk] } })],
      ['a jwks holding a key with use "enc"', async () => ({ jwks: { keys: [{ ...good.publicJwk, use: 'enc' }] } })],
      ['a jwks holding a key with alg HS256', async () => ({ jwks: { keys: [{ ...good.publicJwk, alg: 'HS256' }] } })],
      ['a jwks holding an EC key off its curve', async () => ({ jwks: { keys: [{ ...good.publicJwk, y: good.publicJwk.x }] } })],
      ['an empty jwks', async () => ({ jwks: { keys: [] } })],
      ['a jwks of 11 keys', async () => ({ jwks: { keys: Array.from({ length: 11 }, (_, i) => ({ ...good.publicJwk, kid: `k${i}` })) } })],
      ['a jwks_uri with http on a public host name', async () => ({ jwks_uri: 'http://client.example/jwks.json' })],
      ['a jwks_uri with another scheme', async () => ({ jwks_uri: 'ftp://client.example/jwks.json' })],
      ['a jwks_uri with a private-use scheme', async () => ({ jwks_uri: 'com.example.app:/jwks.json' })],
      ['a jwks_uri with user information', async () => ({ jwks_uri: 'https://user@client.example/jwks.json' })],
      ['token_endpoint_auth_signing_alg HS256', async () => ({ jwks: { keys: [good.publicJwk] }, token_endpoint_auth_signing_alg: 'HS256' })],
      ['token_endpoint_auth_signing_alg none', async () => ({ jwks: { keys: [good.publicJwk] }, token_endpoint_auth_signing_alg: 'none' })],
    ];

    it.each(cases)('refuses %s with invalid_client_metadata and writes no client', async (_case, keys) => {
      const before = await written();
      const reply = await call('POST', '/register', adminToken, { ...base, ...(await keys()) });
      expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
      expect(await written()).toEqual(before);
    });

    it.each([
      ['jwks', () => ({ jwks: { keys: [good.publicJwk] } })],
      ['jwks_uri', () => ({ jwks_uri: 'https://client.example/jwks.json' })],
      ['token_endpoint_auth_signing_alg', () => ({ token_endpoint_auth_signing_alg: 'ES256' })],
    ])('refuses %s on a client_secret_basic client with invalid_client_metadata and writes no client', async (_case, keys) => {
      const before = await written();
      const reply = await call('POST', '/register', adminToken, { ...base, token_endpoint_auth_method: 'client_secret_basic', ...keys() });
      expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
      expect(await written()).toEqual(before);
    });
  });

  describe('jwks_uri: a key set server that fails is a refusal, never a crash (RFC 7591 §2)', () => {
    let key: SigningKey;

    beforeAll(async () => {
      key = await newKey('ES256');
      jwksServer.serveJson('/status-500.json', { keys: [key.publicJwk] }, 500);
      jwksServer.routes.set('/not-json.json', (response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>keys</body></html>'));
      jwksServer.serveJson('/oversized.json', { keys: [key.publicJwk], padding: 'x'.repeat(70 * 1024) });
      jwksServer.serveJson('/not-a-set.json', { keys: 'none' });
      jwksServer.serveJson('/private-only.json', { keys: [{ ...(await exportJWK(key.privateKey)), kid: key.kid }] });
      jwksServer.routes.set('/redirect.json', (response) => response.writeHead(302, { location: jwksServer.url('/good.json') }).end());
      jwksServer.serveJson('/good.json', { keys: [key.publicJwk] });
    });

    it.each([
      ['answers 500', '/status-500.json', /jwks_uri answered 500/],
      ['answers HTML, not JSON', '/not-json.json', /jwks_uri must serve a JWK Set/],
      ['answers more than 64 KiB', '/oversized.json', /jwks_uri could not be read: .*larger than 65536 bytes/],
      ['answers JSON that is no JWK Set', '/not-a-set.json', /jwks_uri must serve a JWK Set/],
      ['serves private keys only', '/private-only.json', /jwks_uri serves no public signing key/],
      ['redirects (redirects are not followed)', '/redirect.json', /jwks_uri answered 302/],
      ['is not served at all (404)', '/missing.json', /jwks_uri answered 404/],
    ])('a jwks_uri that %s: 401 invalid_client, and the next good request is answered', async (_case, path, description) => {
      const id = await keyClient({ jwks_uri: jwksServer.url(path) });
      const hits = jwksServer.hitsOf(path);
      await expectRefused(async () => token(withAssertion(await assertion({ id, key }))), description);
      expect(jwksServer.hitsOf(path)).toBe(hits + 1);
      expectToken(await token(withAssertion(await assertion(alice))));
    });

    it('a failure is remembered for 30 s: requests naming the client, one after another or at once, make one fetch between them and are all refused', async () => {
      const path = '/down.json';
      jwksServer.serveJson(path, { error: 'maintenance' }, 503);
      const id = await keyClient({ jwks_uri: jwksServer.url(path) });
      for (let i = 0; i < 3; i++) await expectRefused(async () => token(withAssertion(await assertion({ id, key }))), /answered 503/);
      expect(jwksServer.hitsOf(path)).toBe(1);
      // Served again, the set is still not fetched within the cooldown: nobody can make us fetch at will.
      jwksServer.serveJson(path, { keys: [key.publicJwk] });
      await expectRefused(async () => token(withAssertion(await assertion({ id, key }))), /answered 503/);
      expect(jwksServer.hitsOf(path)).toBe(1);
    });

    it('concurrent requests for a client whose set is not cached share one fetch', async () => {
      const path = '/shared.json';
      jwksServer.serveJson(path, { keys: [key.publicJwk] });
      const id = await keyClient({ jwks_uri: jwksServer.url(path) });
      const replies = await Promise.all(Array.from({ length: 5 }, async () => token(withAssertion(await assertion({ id, key })))));
      for (const reply of replies) expectToken(reply);
      expect(jwksServer.hitsOf(path)).toBe(1);
    });
  });

  describe('RSA keys with a large public exponent (issue 30, finding 5): refused before any signature is checked', () => {
    // Verifying with a 3000-bit e costs tens of times an e=65537 verification; every real key has e=65537.
    it('a jwks_uri serving one: the key is not used, 401 invalid_client naming the exponent, though the assertion is validly signed; nothing written', async () => {
      const key = largeExponentKey('large-e-uri');
      jwksServer.serveJson('/large-exponent.json', { keys: [key.publicJwk] });
      const id = await keyClient({ jwks_uri: jwksServer.url('/large-exponent.json') });
      await expectRefused(async () => token(withAssertion(await assertion({ id, key }))), /public exponent \(e\) must be 65537/);
    });

    it('a jwks_uri serving one beside a good key: the good key still authenticates, the other is refused as no usable key', async () => {
      const large = largeExponentKey('large-e-beside');
      const good = newRsaKey();
      jwksServer.serveJson('/large-exponent-beside.json', { keys: [large.publicJwk, good.publicJwk] });
      const id = await keyClient({ jwks_uri: jwksServer.url('/large-exponent-beside.json') });
      expectToken(await token(withAssertion(await assertion({ id, key: good }))));
      await expectRefused(async () => token(withAssertion(await assertion({ id, key: large }))), /No registered key/);
    });

    it('a jwks stored before the rule (written to the row): 401 invalid_client naming the exponent, nothing written', async () => {
      const key = largeExponentKey('large-e-stored');
      const id = await keyClient({ jwks: { keys: [newRsaKey().publicJwk as never] } });
      const [jwks, clientId] = app.dataSource.options.type === 'postgres' ? ['$1', '$2'] : ['?', '?'];
      await app.dataSource.query(`UPDATE "clients" SET "jwks" = ${jwks} WHERE "id" = ${clientId}`, [JSON.stringify({ keys: [key.publicJwk] }), id]);
      await expectRefused(async () => token(withAssertion(await assertion({ id, key }))), /public exponent \(e\) must be 65537/);
    });
  });

  describe('RFC 7592 §2.2: a client managing itself with its registration access token', () => {
    let first: SigningKey;
    let id: string;
    let rat: string;
    const metadata = { client_name: 'Self-managed', grant_types: ['client_credentials'], scope: 'notes:read', token_endpoint_auth_method: 'private_key_jwt' };

    beforeAll(async () => {
      first = await newKey('ES256');
      const registered = await call('POST', '/register', adminToken, { ...metadata, jwks: { keys: [first.publicJwk] }, token_endpoint_auth_signing_alg: 'ES256' });
      expect(registered.status).toBe(201);
      expect(registered.json).not.toHaveProperty('client_secret');
      id = registered.json.client_id as string;
      rat = registered.json.registration_access_token as string;
    });

    it.each([
      ['client_secret_basic', 'client_secret_basic'],
      ['client_secret_post', 'client_secret_post'],
      ['none (public)', 'none'],
    ])('cannot switch private_key_jwt to %s: 400 invalid_client_metadata, row unchanged, no secret issued', async (_case, method) => {
      const before = await row(id);
      const reply = await call('PUT', `/register/${id}`, rat, { ...metadata, client_id: id, token_endpoint_auth_method: method });
      expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
      expect(reply.json).not.toHaveProperty('client_secret');
      expect(await row(id)).toEqual(before);
      expectToken(await token(withAssertion(await assertion({ id, key: first }))));
    });

    it('cannot choose itself a secret while keeping private_key_jwt (client_secret in the body is refused)', async () => {
      const before = await row(id);
      const reply = await call('PUT', `/register/${id}`, rat, { ...metadata, client_id: id, client_secret: 'lk_cs_chosen', jwks: { keys: [first.publicJwk] } });
      expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
      expect(await row(id)).toEqual(before);
    });

    it('cannot replace its own jwks, nor drop its ES256 pin: 400 invalid_client_metadata naming jwks, row unchanged, the registered key still the only one', async () => {
      const second = await newKey('EdDSA');
      const before = await row(id);
      for (const change of [{ jwks: { keys: [second.publicJwk] } }, { jwks: { keys: [first.publicJwk] } }]) {
        const reply = await call('PUT', `/register/${id}`, rat, { ...metadata, client_id: id, ...change });
        expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
        expect(reply.json.error_description).toMatch(/jwks/);
      }
      expect(await row(id)).toEqual(before);
      await expectRefused(async () => token(withAssertion(await assertion({ id, key: second }))), /algorithm|key/);
      expectToken(await token(withAssertion(await assertion({ id, key: first }))));
    });

    it('cannot switch its jwks to a jwks_uri of its choosing', async () => {
      const third = await newKey('ES256');
      jwksServer.serveJson('/self-managed.json', { keys: [third.publicJwk] });
      const before = await row(id);
      const reply = await call('PUT', `/register/${id}`, rat, { ...metadata, client_id: id, jwks_uri: jwksServer.url('/self-managed.json'), token_endpoint_auth_signing_alg: 'ES256' });
      expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
      expect(await row(id)).toEqual(before);
      await expectRefused(async () => token(withAssertion(await assertion({ id, key: third }))), /key/);
    });

    it('may change its descriptive metadata when it sends its keys back unchanged', async () => {
      const reply = await call('PUT', `/register/${id}`, rat, { ...metadata, client_name: 'Renamed', client_id: id, jwks: { keys: [first.publicJwk] }, token_endpoint_auth_signing_alg: 'ES256' });
      expect(reply.status).toBe(200);
      expect(reply.json.client_name).toBe('Renamed');
      expectToken(await token(withAssertion(await assertion({ id, key: first }))));
    });
  });

  /*
   * Last, on purpose: @nestjs/passport registers every strategy in passport's one process-wide
   * registry, so once a second app starts in this process its strategies (its verifier, its
   * config, its database connection) serve the first app's guards too. Nothing after this block
   * sends requests to the main app; the controls run in the main app before the second one starts.
   */
  describe('SSRF through jwks_uri (RFC 7591 §2): a loopback key set is never fetched when private networks are refused', () => {
    let ssrf: { nest: NestFastifyApplication; issuer: URL };
    let key: SigningKey;
    const PATH = '/ssrf-jwks.json';
    const probes = new Map<string, string>();

    beforeAll(async () => {
      key = await newKey('ES256');
      jwksServer.serveJson(PATH, { keys: [key.publicJwk] });
      for (const host of ['127.0.0.1', 'localhost']) {
        // /register accepts http on loopback (development); only the fetch can refuse it.
        const registered = await call('POST', '/register', adminToken, {
          client_name: 'SSRF probe',
          grant_types: ['client_credentials'],
          scope: 'notes:read',
          token_endpoint_auth_method: 'private_key_jwt',
          jwks_uri: jwksServer.url(PATH, host),
        });
        expect(registered.status).toBe(201);
        const id = registered.json.client_id as string;
        probes.set(host, id);
        // The control: where private networks are allowed (the main app, as test/setup/env.ts sets) the
        // client and key authenticate, so in the app below only the SSRF protection refuses them.
        const hits = jwksServer.hitsOf(PATH);
        expectToken(await token(withAssertion(await assertion({ id, key }))));
        expect(jwksServer.hitsOf(PATH)).toBe(hits + 1);
      }
      // startAtIssuer writes ISSUER and the env it is given into process.env: withEnv puts both back for later apps.
      ssrf = await withEnv({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'false', ISSUER: process.env.ISSUER ?? '' }, () => startAtIssuer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'false', RATE_LIMIT_CLIENT_PER_MINUTE: '0' }));
      expect(process.env.OUTBOUND_ALLOW_PRIVATE_NETWORKS).toBe('true');
      expect(process.env.ISSUER).toBe(ISSUER);
    });
    afterAll(async () => {
      // The database is this file's and shared: the main app's stop() drops it.
      await ssrf?.nest.close();
    });

    it.each([
      ['http://127.0.0.1:<port> (an IP literal)', '127.0.0.1'],
      ['http://localhost:<port> (a name that resolves to loopback)', 'localhost'],
    ])('refuses a client whose jwks_uri is %s: 401, "could not be read", and the loopback server got no request', async (_case, host) => {
      const id = probes.get(host)!;
      const hits = jwksServer.hitsOf(PATH);
      const aud = ssrf.issuer.origin;
      await expectRefused(async () => postForm(aud, '/token', withAssertion(await assertion({ id, key }, { aud }))), /jwks_uri could not be read: refused to connect to (127\.0\.0\.1|localhost)/);
      expect(jwksServer.hitsOf(PATH)).toBe(hits);
    });

    it('still answers a client with an inline jwks there (the refusal is the fetch\'s, not the app\'s)', async () => {
      const aud = ssrf.issuer.origin;
      expectToken(await postForm(aud, '/token', withAssertion(await assertion(alice, { aud }))));
    });
  });
});
