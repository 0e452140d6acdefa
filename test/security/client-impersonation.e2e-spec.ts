/**
 * Threat: someone obtains tokens by posing as a client (RFC 6819 §4.4.1.4, §5.2.3). Defences:
 * confidential clients authenticate with their own secret, checked against its hash (RFC 6749
 * §2.3.1, §3.2.1); public clients have no secret to present and cannot pose as confidential ones;
 * one authentication method per request (RFC 6749 §2.3); a Basic header is decoded exactly as RFC
 * 7617 and RFC 6749 §2.3.1 say, and nothing odd in it is a 5xx.
 */
import { Client } from '../../src/clients/client.entity.js';
import { hashSecret } from '../../src/common/secrets.js';
import { basicAuth, postToken, type TokenResult } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

const CLIENT_CREDENTIALS = { grant_type: 'client_credentials' };

/** A Basic header carrying `credentials` as given (no form-encoding), base64-encoded. */
function rawBasic(credentials: string | Buffer, scheme = 'Basic'): string {
  return `${scheme} ${Buffer.from(credentials).toString('base64')}`;
}

/** The secret with its last character changed (to another base64url character). */
function flipLast(secret: string): string {
  return secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A');
}

function expectInvalidClient(reply: TokenResult): void {
  expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 401, error: 'invalid_client' });
  // RFC 7617 §2.1: the Basic challenge, with the realm (and the charset parameter of §2.1).
  expect(reply.headers.get('www-authenticate')).toMatch(/^Basic realm="latchkey"(, charset="UTF-8")?$/);
}

describe('client impersonation (RFC 6819 §4.4.1.4, §5.2.3; RFC 6749 §2.3.1, §3.2.1)', () => {
  let app: TestApp;
  let service: Required<RegisteredClient>;
  let other: Required<RegisteredClient>;
  let publicClient: RegisteredClient;

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0' });
    const confidential = async () => {
      const created = await app.createClient({ grantTypes: ['client_credentials'], scope: 'notes:read', redirectUris: [] });
      return { ...created, clientSecret: created.clientSecret! };
    };
    service = await confidential();
    other = await confidential();
    publicClient = await app.createClient({ isPublic: true, scope: 'notes:read' });
  });
  afterAll(async () => app?.stop());

  it('accepts the real credentials (the baseline every refusal below is measured against)', async () => {
    const reply = await postToken(app, CLIENT_CREDENTIALS, { authorization: basicAuth(service.clientId, service.clientSecret) });
    expect(reply.status).toBe(200);
    expect(reply.body.access_token).toEqual(expect.stringMatching(/^lk_at_/));
  });

  describe('RFC 6749 §2.1, §3.2.1: a public client cannot pose as a confidential one', () => {
    it.each([
      ['an invented secret in a Basic header', () => ({ form: {}, headers: { authorization: basicAuth(publicClient.clientId, 'lk_cs_invented') } })],
      ['an invented client_secret in the body', () => ({ form: { client_id: publicClient.clientId, client_secret: 'lk_cs_invented' }, headers: {} })],
      ['an empty-looking secret (a space) in a Basic header', () => ({ form: {}, headers: { authorization: basicAuth(publicClient.clientId, ' ') } })],
    ])('refuses %s with invalid_client', async (_name, request) => {
      const { form, headers } = request();
      const reply = await postToken(app, { ...CLIENT_CREDENTIALS, ...form }, headers);
      expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    });
  });

  describe('RFC 6749 §5.2: a wrong secret is invalid_client, 401 with WWW-Authenticate: Basic', () => {
    it('refuses a wrong secret in a Basic header', async () => {
      expectInvalidClient(await postToken(app, CLIENT_CREDENTIALS, { authorization: basicAuth(service.clientId, flipLast(service.clientSecret)) }));
    });

    it('refuses a wrong client_secret in the body', async () => {
      const reply = await postToken(app, { ...CLIENT_CREDENTIALS, client_id: service.clientId, client_secret: 'lk_cs_wrong' });
      expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    });

    it('refuses the secret of another client, in the header and in the body', async () => {
      expectInvalidClient(await postToken(app, CLIENT_CREDENTIALS, { authorization: basicAuth(service.clientId, other.clientSecret) }));
      const body = await postToken(app, { ...CLIENT_CREDENTIALS, client_id: service.clientId, client_secret: other.clientSecret });
      expect({ status: body.status, error: body.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    });

    it('refuses a client_id in the body that disagrees with the Basic credentials', async () => {
      expectInvalidClient(await postToken(app, { ...CLIENT_CREDENTIALS, client_id: other.clientId }, { authorization: basicAuth(service.clientId, service.clientSecret) }));
    });
  });

  describe('RFC 6749 §2.3: more than one authentication method in one request', () => {
    it('refuses Basic plus client_secret in the body with invalid_request, even when both are right', async () => {
      const reply = await postToken(
        app,
        { ...CLIENT_CREDENTIALS, client_id: service.clientId, client_secret: service.clientSecret },
        { authorization: basicAuth(service.clientId, service.clientSecret) },
      );
      expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 400, error: 'invalid_request' });
    });
  });

  describe('RFC 7617 and RFC 6749 §2.3.1: decoding the Basic header', () => {
    /** A client whose secret holds every character form-encoding touches: '+', space, ':', '%', non-ASCII. */
    const ODD_SECRET = 'p+q r:s%ü';
    /** A client whose secret holds a colon and nothing else that form-decoding would change. */
    const COLON_SECRET = 'alpha:beta';
    let odd: Required<RegisteredClient>;
    let colon: Required<RegisteredClient>;

    beforeAll(async () => {
      // Issued secrets are base64url; these stand for secrets a client might hold, stored as issued ones are (a SHA-256).
      const withSecret = async (secret: string) => {
        const created = await app.createClient({ grantTypes: ['client_credentials'], scope: 'notes:read', redirectUris: [] });
        await app.dataSource.createQueryBuilder().update(Client).set({ secretHash: hashSecret(secret) }).where('id = :id', { id: created.clientId }).execute();
        return { ...created, clientSecret: secret };
      };
      odd = await withSecret(ODD_SECRET);
      colon = await withSecret(COLON_SECRET);
    });

    const cases: Array<{ name: string; header: () => string; expected: 200 | 401 }> = [
      { name: 'form-encoded id and secret, space as +', header: () => basicAuth(odd.clientId, ODD_SECRET), expected: 200 },
      { name: 'form-encoded secret, space as %20', header: () => rawBasic(`${odd.clientId}:${encodeURIComponent(ODD_SECRET)}`), expected: 200 },
      { name: 'form-encoded client id (%xx for every character)', header: () => rawBasic(`${[...service.clientId].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')}:${service.clientSecret}`), expected: 200 },
      { name: 'a literal + that stands for a space, so the secret does not match', header: () => rawBasic(`${odd.clientId}:p+q+r%3As%25%C3%BC`), expected: 401 },
      { name: 'a secret with a colon, sent unencoded: split at the first colon', header: () => rawBasic(`${colon.clientId}:${COLON_SECRET}`), expected: 200 },
      { name: 'a secret with a colon, encoded as %3A', header: () => rawBasic(`${colon.clientId}:alpha%3Abeta`), expected: 200 },
      { name: 'the right secret followed by a colon and more', header: () => rawBasic(`${service.clientId}:${service.clientSecret}:extra`), expected: 401 },
      { name: 'the right secret followed by a bare colon', header: () => rawBasic(`${service.clientId}:${service.clientSecret}:`), expected: 401 },
      { name: 'the lowercase scheme "basic" (RFC 7235 §2.1: case-insensitive)', header: () => basicAuth(service.clientId, service.clientSecret).replace(/^Basic/, 'basic'), expected: 200 },
      { name: 'the uppercase scheme "BASIC"', header: () => basicAuth(service.clientId, service.clientSecret).replace(/^Basic/, 'BASIC'), expected: 200 },
      { name: 'no colon', header: () => rawBasic(`${service.clientId}${service.clientSecret}`), expected: 401 },
      { name: 'an empty id', header: () => rawBasic(`:${service.clientSecret}`), expected: 401 },
      { name: 'an empty secret', header: () => rawBasic(`${service.clientId}:`), expected: 401 },
      { name: 'an empty id and secret', header: () => rawBasic(':'), expected: 401 },
      { name: 'nothing after the scheme', header: () => 'Basic', expected: 401 },
      { name: 'the scheme and a space only', header: () => 'Basic ', expected: 401 },
      { name: 'invalid base64', header: () => 'Basic !!!not*base64***', expected: 401 },
      { name: 'base64 of non-UTF-8 bytes', header: () => rawBasic(Buffer.concat([Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(':'), Buffer.from([0x80, 0xbf, 0xf8])])), expected: 401 },
      { name: 'a NUL byte in the id', header: () => rawBasic(`${service.clientId}\0:${service.clientSecret}`), expected: 401 },
      { name: 'a %00 in the id', header: () => rawBasic(`${service.clientId}%00:${service.clientSecret}`), expected: 401 },
      { name: 'a malformed % escape in the secret', header: () => rawBasic(`${service.clientId}:${service.clientSecret}%E0%A4%A`), expected: 401 },
      { name: 'two spaces after the scheme', header: () => basicAuth(service.clientId, service.clientSecret).replace(' ', '  '), expected: 401 },
      { name: 'a very long id (8 KiB)', header: () => rawBasic(`${'a'.repeat(8192)}:${service.clientSecret}`), expected: 401 },
      { name: 'a very long secret (8 KiB)', header: () => rawBasic(`${service.clientId}:${'s'.repeat(8192)}`), expected: 401 },
      { name: 'another scheme (Bearer)', header: () => `Bearer ${service.clientSecret}`, expected: 401 },
      { name: 'the credentials unencoded by base64', header: () => `Basic ${service.clientId}:${service.clientSecret}`, expected: 401 },
    ];

    it.each(cases)('$name → $expected', async ({ header, expected }) => {
      const reply = await postToken(app, CLIENT_CREDENTIALS, { authorization: header() });
      if (expected === 200) {
        expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: expect.objectContaining({ access_token: expect.stringMatching(/^lk_at_/) }) });
      } else {
        expect({ status: reply.status, error: reply.body.error }).toEqual({ status: 401, error: 'invalid_client' });
        expect(reply.headers.get('www-authenticate')).toMatch(/^Basic realm="latchkey"/);
      }
    });

    it('answers a header beyond the server\'s header size limit with 431, not a 5xx', async () => {
      const reply = await fetch(app.url('/token'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: rawBasic(`${service.clientId}:${'s'.repeat(64 * 1024)}`) },
        body: new URLSearchParams(CLIENT_CREDENTIALS).toString(),
      });
      expect(reply.status).toBe(431);
    });
  });

  describe('RFC 7591 §2, OpenID Connect Core §9: only the registered token_endpoint_auth_method authenticates', () => {
    let basicClient: Required<RegisteredClient>;
    let postClient: Required<RegisteredClient>;
    let introspector: Required<RegisteredClient>;

    beforeAll(async () => {
      const confidential = async (tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post', scope = 'notes:read') => {
        const created = await app.createClient({ grantTypes: ['client_credentials'], scope, redirectUris: [], tokenEndpointAuthMethod });
        return { ...created, clientSecret: created.clientSecret! };
      };
      basicClient = await confidential('client_secret_basic');
      postClient = await confidential('client_secret_post');
      introspector = await confidential('client_secret_post', 'tokens:introspect');
    });

    const viaBasic = (client: Required<RegisteredClient>) => ({ form: {}, headers: { authorization: basicAuth(client.clientId, client.clientSecret) } });
    const viaPost = (client: Required<RegisteredClient>) => ({ form: { client_id: client.clientId, client_secret: client.clientSecret }, headers: {} });

    it('accepts each client with the method it registered', async () => {
      for (const request of [viaBasic(basicClient), viaPost(postClient)]) {
        expect((await postToken(app, { ...CLIENT_CREDENTIALS, ...request.form }, request.headers)).status).toBe(200);
      }
    });

    it.each([
      ['a client_secret_basic client sending its secret in the body', () => viaPost(basicClient)],
      ['a client_secret_post client sending its secret with HTTP Basic', () => viaBasic(postClient)],
    ])('refuses %s at /token with invalid_client, issuing nothing', async (_name, request) => {
      const before = await app.dataSource.query<unknown[]>('SELECT "id" FROM "tokens"');
      const { form, headers } = request();
      const reply = await postToken(app, { ...CLIENT_CREDENTIALS, ...form }, headers);
      expectInvalidClient(reply);
      expect(reply.body.error_description).toEqual(expect.stringContaining('registered'));
      expect(await app.dataSource.query<unknown[]>('SELECT "id" FROM "tokens"')).toHaveLength(before.length);
    });

    it.each(['/revoke', '/introspect'])('refuses the wrong method at %s too', async (path) => {
      const token = (await postToken(app, CLIENT_CREDENTIALS, viaBasic(basicClient).headers)).body.access_token as string;
      const wrong = await fetch(app.url(path), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(introspector.clientId, introspector.clientSecret) },
        body: new URLSearchParams({ token }).toString(),
      });
      expect({ status: wrong.status, error: ((await wrong.json()) as { error: string }).error }).toEqual({ status: 401, error: 'invalid_client' });
      const right = await fetch(app.url(path), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: introspector.clientId, client_secret: introspector.clientSecret }).toString(),
      });
      expect(right.status).toBe(200);
    });
  });
});
