import { appConfig } from '../../src/config/app.config.js';
import { Browser } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, redirectParams } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

/** Deliberately not the address the test server listens on: the document must follow ISSUER. */
const ISSUER = 'https://auth.example.test';
const METADATA_PATH = '/.well-known/oauth-authorization-server';

interface Metadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  device_authorization_endpoint?: string;
  scopes_supported: string[];
  response_types_supported: string[];
  response_modes_supported?: string[];
  grant_types_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  code_challenge_methods_supported: string[];
  authorization_response_iss_parameter_supported: boolean;
  service_documentation?: string;
  [name: string]: unknown;
}

/** An advertised endpoint, requested on the test server: it must live under the issuer. */
function pathUnderIssuer(url: string): string {
  const parsed = new URL(url);
  expect(parsed.origin).toBe(ISSUER);
  return parsed.pathname + parsed.search;
}

describe('authorization server metadata (RFC 8414)', () => {
  let app: TestApp;
  let response: Response;
  let metadata: Metadata;

  beforeAll(async () => {
    app = await TestApp.start({ ISSUER });
    response = await fetch(app.url(METADATA_PATH));
    metadata = (await response.json()) as Metadata;
  });
  afterAll(async () => app?.stop());

  describe('GET /.well-known/oauth-authorization-server (§3)', () => {
    it('answers 200 with a JSON object (§3.2)', () => {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
      expect(typeof metadata).toBe('object');
    });

    it('may be cached by clients and proxies: public, with a bounded max-age', () => {
      const cacheControl = response.headers.get('cache-control') ?? '';
      expect(cacheControl).toMatch(/\bpublic\b/);
      expect(cacheControl).not.toMatch(/no-store|no-cache|private/);
      const maxAge = /\bmax-age=(\d+)\b/.exec(cacheControl);
      expect(maxAge).not.toBeNull();
      expect(Number(maxAge![1])).toBeGreaterThan(0);
      expect(Number(maxAge![1])).toBeLessThanOrEqual(24 * 3600);
    });

    it('names the configured ISSUER as issuer, the same value the app uses everywhere (§2, §3.3)', () => {
      expect(metadata.issuer).toBe(ISSUER);
      expect(app.app.get(appConfig.KEY).issuer).toBe(ISSUER);
    });

    it('builds every endpoint on the issuer', () => {
      expect(metadata.authorization_endpoint).toBe(`${ISSUER}/authorize`);
      expect(metadata.token_endpoint).toBe(`${ISSUER}/token`);
    });

    it('advertises the code flow with S256 PKCE and the iss response parameter, and the legacy grants that opted-in clients may use', () => {
      // token, implicit and password work only for clients an administrator allowed (test/e2e/implicit-grant, password-grant).
      expect(metadata.response_types_supported).toEqual(['code', 'token', 'id_token']);
      expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
      // Token exchange (RFC 8693) too, for the clients an administrator registered for it (test/e2e/token-exchange),
      // and the device authorization grant (RFC 8628, test/e2e/device-authorization).
      expect([...metadata.grant_types_supported].sort()).toEqual(['authorization_code', 'client_credentials', 'implicit', 'password', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code', 'urn:ietf:params:oauth:grant-type:token-exchange']);
      // RFC 9207 §3.
      expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
      if (metadata.response_modes_supported !== undefined) expect(metadata.response_modes_supported).toEqual(['query', 'fragment', 'form_post']);
    });

    it('does not advertise what RFC 9700 forbids outright: plain PKCE', () => {
      expect(metadata.code_challenge_methods_supported).not.toContain('plain');
    });

    it('lists the four client authentication methods the token endpoint accepts, and only asymmetric algorithms for private_key_jwt', () => {
      expect([...metadata.token_endpoint_auth_methods_supported].sort()).toEqual(['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt']);
      expect(metadata.token_endpoint_auth_signing_alg_values_supported).toEqual(['ES256', 'ES384', 'PS256', 'RS256', 'EdDSA', 'Ed25519']);
    });

    it("lists OpenID Connect's scopes, the scopes of the collections file, the client scopes and the admin scopes, no more", () => {
      expect([...metadata.scopes_supported].sort()).toEqual(['admin:clients', 'admin:owner', 'admin:people', 'admin:read', 'clients:register', 'email', 'notes:read', 'notes:write', 'offline_access', 'openid', 'photos:read', 'photos:write', 'profile', 'scim', 'tokens:introspect']);
    });

    it('lists the access token types, bearer and mac, and the MAC algorithm (Latchkey extensions)', () => {
      expect(metadata.token_types_supported).toEqual(['bearer', 'mac']);
      expect(metadata.mac_algorithms_supported).toEqual(['hmac-sha-256']);
    });

    it('only uses parameter names registered by RFC 8414, RFC 9207, RFC 9126 and RFC 8628, besides its two documented extensions', () => {
      const extensions = ['token_types_supported', 'mac_algorithms_supported'];
      const registered = [
        'issuer',
        'authorization_endpoint',
        'token_endpoint',
        'jwks_uri',
        'registration_endpoint',
        'scopes_supported',
        'response_types_supported',
        'response_modes_supported',
        'grant_types_supported',
        'token_endpoint_auth_methods_supported',
        'token_endpoint_auth_signing_alg_values_supported',
        'service_documentation',
        'ui_locales_supported',
        'op_policy_uri',
        'op_tos_uri',
        'revocation_endpoint',
        'revocation_endpoint_auth_methods_supported',
        'revocation_endpoint_auth_signing_alg_values_supported',
        'introspection_endpoint',
        'introspection_endpoint_auth_methods_supported',
        'introspection_endpoint_auth_signing_alg_values_supported',
        'code_challenge_methods_supported',
        'authorization_response_iss_parameter_supported',
        // RFC 9126 §5.
        'pushed_authorization_request_endpoint',
        'require_pushed_authorization_requests',
        // RFC 9449 §5.1.
        'dpop_signing_alg_values_supported',
        // RFC 8628 §4.
        'device_authorization_endpoint',
      ];
      for (const name of Object.keys(metadata)) expect([...registered, ...extensions]).toContain(name);
    });

    it('answers the same document to every request', async () => {
      const again = await fetch(app.url(METADATA_PATH));
      expect(await again.json()).toEqual(metadata);
    });
  });

  describe('every advertised endpoint exists', () => {
    let client: RegisteredClient;
    let user: TestUser;

    beforeAll(async () => {
      client = await app.createClient({ grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'] });
      user = await app.createUser();
    });

    it('authorization_endpoint: GET without parameters is an authorization error page, not a 404', async () => {
      const page = await fetch(app.url(pathUnderIssuer(metadata.authorization_endpoint)), { redirect: 'manual' });
      expect(page.status).toBe(400);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    });

    it('authorization_endpoint: a valid request shows the login page', async () => {
      const path = pathUnderIssuer(metadata.authorization_endpoint);
      const page = await new Browser(app.baseUrl).get(`${path}${authorizeUrl(client, { scope: 'notes:read', state: 'x' }).slice('/authorize'.length)}`);
      expect(page.status).toBe(200);
      expect(page.body).toContain('name="username"');
    });

    it('token_endpoint: POST without client authentication is invalid_client (RFC 6749 §5.2), not a 404', async () => {
      const result = await fetch(app.url(pathUnderIssuer(metadata.token_endpoint)), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=authorization_code&code=x',
      });
      expect(result.status).toBe(401);
      expect(await result.json()).toMatchObject({ error: 'invalid_client' });
    });

    it('device_authorization_endpoint: POST without client authentication is invalid_client (RFC 8628 §3.1), not a 404', async () => {
      const result = await fetch(app.url(pathUnderIssuer(metadata.device_authorization_endpoint!)), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'scope=notes%3Aread' });
      expect(result.status).toBe(401);
      expect(await result.json()).toMatchObject({ error: 'invalid_client' });
    });

    it('token_endpoint: accepts the advertised grant types (an authenticated request reaches the grant)', async () => {
      // implicit has no token request (RFC 6749 §4.2): its token comes from the authorization endpoint.
      for (const grantType of metadata.grant_types_supported.filter((g) => g !== 'implicit')) {
        const result = await fetch(app.url(pathUnderIssuer(metadata.token_endpoint)), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
          body: new URLSearchParams({ grant_type: grantType, code: 'lk_ac_unknown', refresh_token: 'lk_rt_unknown' }).toString(),
        });
        // client_credentials needs no grant to present: it succeeds outright.
        // password, token exchange and the device grant reach the dispatcher, which refuses this client: it was not registered for them.
        const refusedClient = grantType === 'password' || grantType === 'urn:ietf:params:oauth:grant-type:token-exchange' || grantType === 'urn:ietf:params:oauth:grant-type:device_code';
        const expected =
          grantType === 'client_credentials'
            ? { status: 200, body: expect.objectContaining({ token_type: 'bearer' }) }
            : { status: 400, body: expect.objectContaining({ error: refusedClient ? 'unauthorized_client' : 'invalid_grant' }) };
        expect({ grantType, status: result.status, body: await result.json() }).toEqual({ grantType, ...expected });
      }
    });

    it('token_endpoint: refuses a grant type it does not advertise with unsupported_grant_type', async () => {
      const result = await fetch(app.url(pathUnderIssuer(metadata.token_endpoint)), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
        body: 'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=x',
      });
      expect(result.status).toBe(400);
      expect(await result.json()).toMatchObject({ error: 'unsupported_grant_type' });
    });

    it('service_documentation, when present, is a page under the issuer', async () => {
      if (metadata.service_documentation === undefined) return;
      const page = await fetch(app.url(pathUnderIssuer(metadata.service_documentation)), { redirect: 'manual' });
      expect(page.status).toBe(200);
    });

    it('the authorization response carries iss equal to the advertised issuer (RFC 9207 §2)', async () => {
      const pkce = newPkce();
      const page = await authorizeAsUser(
        new Browser(app.baseUrl),
        user,
        authorizeUrl(client, { scope: 'notes:read', state: 'st', code_challenge: pkce.challenge, code_challenge_method: 'S256' }),
      );
      // 303 when the consent form was just posted, 302 when consent was already on record.
      expect([302, 303]).toContain(page.status);
      const params = redirectParams(page);
      expect(params.get('code')).toBeTruthy();
      expect(params.get('iss')).toBe(metadata.issuer);
    });

    it('an error response also carries iss (RFC 9207 §2)', async () => {
      const page = await new Browser(app.baseUrl).get(authorizeUrl(client, { response_type: 'token', state: 'st' }));
      expect(page.status).toBe(302);
      const params = redirectParams(page);
      expect(params.get('error')).toBe('unsupported_response_type');
      expect(params.get('iss')).toBe(metadata.issuer);
    });
  });
});

describe('ISSUER configuration', () => {
  const saved = { ISSUER: process.env.ISSUER, PORT: process.env.PORT };
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('defaults to http://localhost:PORT', () => {
    delete process.env.ISSUER;
    process.env.PORT = '4711';
    expect(appConfig().issuer).toBe('http://localhost:4711');
  });

  it('refuses an issuer with a query or fragment (RFC 8414 §2)', () => {
    process.env.ISSUER = 'https://auth.example.test/?tenant=1';
    expect(() => appConfig()).toThrow(/ISSUER/);
    process.env.ISSUER = 'https://auth.example.test/#x';
    expect(() => appConfig()).toThrow(/ISSUER/);
  });
});

describe('an issuer with a path (RFC 8414 §3.1)', () => {
  let app: TestApp;
  afterAll(async () => app?.stop());

  it('serves the document at /.well-known/oauth-authorization-server/<path> too, as oauth4webapi asks for it; any other path under it is a JSON 404', async () => {
    app = await TestApp.start({ ISSUER: 'https://auth.example.test/tenant-a' });
    const response = await fetch(app.url('/.well-known/oauth-authorization-server/tenant-a'));
    expect(response.status).toBe(200);
    expect(((await response.json()) as { issuer: string }).issuer).toBe('https://auth.example.test/tenant-a');
    const other = await fetch(app.url('/.well-known/oauth-authorization-server/tenant-b'));
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: string }).error).toEqual(expect.any(String));
  });

  it('an issuer without a path has no such location: 404', async () => {
    await app?.stop();
    app = await TestApp.start({ ISSUER: 'https://auth.example.test' });
    expect((await fetch(app.url('/.well-known/oauth-authorization-server/anything'))).status).toBe(404);
  });
});
