/**
 * Threat: a client's required sign-in level lowered by its own requests (issue 43, finding 1). A
 * client registered with `clients:create --require-mfa` ("require a second factor of everyone
 * using a client") got a password-only code when the browser added acr_values=urn:latchkey:acr:pwd:
 * the request replaced the registration instead of raising it.
 * Defence: the client's minimum_acr is a floor. One function (requiredAcr) takes every source: the
 * request's acr_values (the weakest named, Core §3.1.2.1) or else the client's default_acr_values
 * (a default, Dynamic Registration §2), the client's floor, and the person's requirement
 * (users:update --require-mfa, MFA_REQUIRED); the strictest wins, in the code flow, for pushed
 * requests and on the device verification page alike. A client managing itself may raise its floor,
 * never lower it (RFC 7592 §2.2).
 */
import { jest } from '@jest/globals';
import { decodeJwt } from 'jose';
import { AuditService } from '../../src/audit/audit.service.js';
import { MIGRATIONS } from '../../src/schema/migrations/index.js';
import { User } from '../../src/users/user.entity.js';
import { Browser, hiddenFields, isConsentPage, isLoginPage, type Page } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { DEVICE_CODE_GRANT, openVerificationPage, pollToken, requestDeviceAuthorization, submitUserCode } from '../helpers/device.js';
import { authorizeUrl, basicAuth, newPkce, redirectParams, tokenRequest, type Pkce } from '../helpers/oauth-flow.js';
import { enrolFrom, redeemFrom, signInWithPassword } from '../helpers/second-factor.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { totpCode } from '../helpers/totp.js';

const PWD = 'urn:latchkey:acr:pwd';
const MFA = 'urn:latchkey:acr:mfa';
const PHR = 'urn:latchkey:acr:phr';

/** Where a required level may come from, as a test case sets them. */
interface Sources {
  acr_values?: string;
  default_acr_values?: string[];
  minimum_acr?: string;
  /** An administrator requires a second factor of the person. */
  person?: boolean;
}

describe("a client's minimum_acr is a floor, not a default (OpenID Connect Core §3.1.2.1; Dynamic Registration §2)", () => {
  let app: TestApp;
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', DEVICE_CODE_INTERVAL_SECONDS: '1' });
    jest.spyOn(app.clock, 'now').mockImplementation(() => new Date(now()));
  }, 180_000);
  afterAll(async () => app?.stop());
  beforeEach(() => {
    offsetMs += 30_000;
  });

  /** A client an administrator registered with these OpenID settings (the floor included). */
  const clientWith = (openId: Omit<Sources, 'acr_values' | 'person'>, extra: Parameters<TestApp['createClient']>[0] = {}): Promise<RegisteredClient> =>
    app.createClient({ name: 'Bank', redirectUris: ['https://bank.example/cb'], scope: 'notes:read', openId: openId as never, ...extra });

  const url = (client: RegisteredClient, pkce: Pkce, params: Record<string, string | undefined> = {}) =>
    authorizeUrl(client, { scope: 'openid notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...params });

  /**
   * A person with one-time codes, signed in with the password only in `browser` (they enrolled in
   * another browser afterwards): whatever the request needs beyond a password, it must ask for.
   */
  async function passwordOnlySession(person = false): Promise<{ user: TestUser; key: string; browser: Browser }> {
    const user = await app.createUser();
    if (person) await app.dataSource.manager.update(User, { username: user.username }, { requireMfa: true });
    const browser = new Browser(app.baseUrl);
    await signInWithPassword(browser, user);
    const other = new Browser(app.baseUrl);
    await signInWithPassword(other, user);
    const { key } = await enrolFrom(other, await other.get('/account/one-time-codes'), now());
    offsetMs += 30_000;
    return { user, key, browser };
  }

  /** The level /authorize held a password-only session to, read from what it asked: nothing (consent), the code, or a passkey sign-in. */
  function levelAsked(page: Page): string {
    if (isConsentPage(page)) return PWD;
    if (page.location === '/login/code') return MFA;
    if (isLoginPage(page)) return PHR;
    throw new Error(`Unexpected answer ${page.status} ${page.location ?? ''}\n${page.body.slice(0, 500)}`);
  }

  const codeCount = (clientId: string): Promise<number> =>
    app.dataSource.createQueryBuilder().from('authorization_codes', 'c').where('c.client_id = :id', { id: clientId }).getCount();

  describe('the level required is the strictest of every source: each alone and in pairs', () => {
    it.each<[string, Sources, string]>([
      ['nothing asked or registered: a password', {}, PWD],
      ['the request asks for mfa', { acr_values: MFA }, MFA],
      ["the client's default_acr_values name mfa", { default_acr_values: [MFA] }, MFA],
      ["the client's minimum_acr is mfa", { minimum_acr: MFA }, MFA],
      ["the client's minimum_acr is phr", { minimum_acr: PHR }, PHR],
      ['an administrator requires a second factor of the person', { person: true }, MFA],
      ['the request asks for pwd, the default is mfa: a default gives way to the request', { acr_values: PWD, default_acr_values: [MFA] }, PWD],
      ['the request asks for pwd, the floor is mfa: the floor holds', { acr_values: PWD, minimum_acr: MFA }, MFA],
      ['the request names only a level this server does not know, the floor is mfa', { acr_values: 'urn:example:loa:1', minimum_acr: MFA }, MFA],
      ['the request asks for mfa, the floor is phr', { acr_values: MFA, minimum_acr: PHR }, PHR],
      ['the request asks for phr, the floor is mfa: a request may ask for more', { acr_values: PHR, minimum_acr: MFA }, PHR],
      ['the default is phr, the floor mfa', { default_acr_values: [PHR], minimum_acr: MFA }, PHR],
      ['the request asks for pwd, the default is phr, the floor mfa: the request replaces the default, not the floor', { acr_values: PWD, default_acr_values: [PHR], minimum_acr: MFA }, MFA],
      ['the request asks for pwd, an administrator requires a second factor of the person', { acr_values: PWD, person: true }, MFA],
      ['the floor is phr, an administrator requires a second factor of the person', { minimum_acr: PHR, person: true }, PHR],
    ])('%s', async (_case, { acr_values, person, ...registered }, expected) => {
      const client = await clientWith(registered);
      const { browser } = await passwordOnlySession(person);
      expect(levelAsked(await browser.get(url(client, newPkce(), { acr_values })))).toBe(expected);
    });
  });

  it("clients:create --require-mfa (docs/guides/second-factors-and-passkeys.md: \"of everyone using a client\"): a request asking for pwd is asked for the code, refused with prompt=none, gets no code; after the code the ID token says mfa; the client shows minimum_acr", async () => {
    const cli = await runCli(['clients:create', '--name', 'Bank', '--redirect-uri', 'https://bank.example/cb', '--scope', 'notes:read', '--require-mfa']);
    expect({ code: cli.code, stderr: cli.stderr }).toEqual({ code: 0, stderr: '' });
    const created = JSON.parse(cli.stdout) as Record<string, unknown>;
    const client: RegisteredClient = { clientId: created.client_id as string, clientSecret: created.client_secret as string, redirectUri: 'https://bank.example/cb' };

    const { key, browser } = await passwordOnlySession();
    const pkce = newPkce();
    const request = url(client, pkce, { acr_values: PWD });
    expect(levelAsked(await browser.get(request))).toBe(MFA);
    // The consent form posted by the session itself for the same request is held to the floor too.
    const home = await browser.get('/account');
    const forged = await browser.post('/consent', { csrf_token: hiddenFields(home.body, '/logout').csrf_token, authorization_request: request.slice('/authorize?'.length), decision: 'allow' });
    expect(forged.location).toBe('/login/code');
    expect(redirectParams(await browser.get(url(client, pkce, { acr_values: PWD, prompt: 'none' }))).get('error')).toBe('interaction_required');
    expect(await codeCount(client.clientId)).toBe(0);

    const back = await browser.submit(await browser.get('/login/code'), '/login/code', { code: totpCode(key, now()) });
    const tokens = await redeemFrom(app, browser, await browser.get(back.location!), client, pkce);
    expect(decodeJwt(tokens.id_token as string).acr).toBe(MFA);
    expect({ minimum_acr: created.minimum_acr, default_acr_values: created.default_acr_values }).toEqual({ minimum_acr: MFA, default_acr_values: undefined });
  });

  it('a pushed request (RFC 9126) asking for pwd is held to the floor too', async () => {
    const client = await clientWith({ minimum_acr: MFA });
    const { browser } = await passwordOnlySession();
    const pkce = newPkce();
    const form = { response_type: 'code', redirect_uri: client.redirectUri, scope: 'openid notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256', acr_values: PWD };
    const pushed = await fetch(app.url('/par'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
      body: new URLSearchParams(form).toString(),
    });
    expect(pushed.status).toBe(201);
    const { request_uri } = (await pushed.json()) as { request_uri: string };
    const answer = await browser.get(`/authorize?${new URLSearchParams({ client_id: client.clientId, request_uri })}`);
    expect(levelAsked(answer)).toBe(MFA);
    expect(await codeCount(client.clientId)).toBe(0);
  });

  it('the device verification page holds the person to the floor (RFC 8628 §3.1 has no acr_values): the code is asked before they may allow', async () => {
    const client = await clientWith({ minimum_acr: MFA }, { name: 'TV app', redirectUris: [], isPublic: true, grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'] as never });
    const { user, browser } = await passwordOnlySession();
    const started = await requestDeviceAuthorization(app.baseUrl, client, { scope: 'openid notes:read' });
    expect(started.status).toBe(200);
    const { device_code, user_code } = started.body as { device_code: string; user_code: string };
    const next = await submitUserCode(browser, await openVerificationPage(browser, user), user_code);
    expect({ status: next.status, location: next.location }).toEqual({ status: 303, location: '/login/code' });
    expect((await pollToken(app.baseUrl, client, device_code)).body.error).toBe('authorization_pending');
  });

  describe('who may set and lower the floor (RFC 7591 §2, RFC 7592 §2.2)', () => {
    let adminToken: string;
    const METADATA = { client_name: 'Bank', redirect_uris: ['https://bank.example/cb'], grant_types: ['authorization_code'], scope: 'notes:read' };

    beforeAll(async () => {
      const admin = await app.createClient({ name: 'admin', redirectUris: [], grantTypes: ['client_credentials'] as never, scope: 'clients:register' });
      const token = await tokenRequest(app, admin, { grant_type: 'client_credentials' });
      adminToken = token.body.access_token as string;
    });

    async function call(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
      const response = await fetch(app.url(path), {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    }

    async function register(metadata: Record<string, unknown>): Promise<{ id: string; rat: string; body: Record<string, unknown> }> {
      const reply = await call('POST', '/register', adminToken, metadata);
      expect(reply.status).toBe(201);
      return { id: reply.json.client_id as string, rat: reply.json.registration_access_token as string, body: reply.json };
    }

    async function row(id: string): Promise<Record<string, unknown>> {
      const placeholder = app.dataSource.options.type === 'postgres' ? '$1' : '?';
      return (await app.dataSource.query<Record<string, unknown>[]>(`SELECT * FROM "clients" WHERE "id" = ${placeholder}`, [id]))[0];
    }

    const auditOf = async (id: string) => (await app.app.get(AuditService).list(500)).filter((event) => event.subject === `client:${id}`);

    it('a client registered over RFC 7591 with a floor reads it back; a level this server does not offer is invalid_client_metadata and nothing is stored', async () => {
      const client = await register({ ...METADATA, minimum_acr: MFA });
      expect(client.body.minimum_acr).toBe(MFA);
      expect((await call('GET', `/register/${client.id}`, client.rat)).json.minimum_acr).toBe(MFA);
      const before = await app.dataSource.createQueryBuilder().from('clients', 'c').getCount();
      const refused = await call('POST', '/register', adminToken, { ...METADATA, minimum_acr: 'urn:example:loa:4' });
      expect({ status: refused.status, error: refused.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
      expect(await app.dataSource.createQueryBuilder().from('clients', 'c').getCount()).toBe(before);
    });

    it.each<[string, string, string | undefined]>([
      ['remove it', MFA, undefined],
      ['lower it to a password', MFA, PWD],
      ['lower it from phr to mfa', PHR, MFA],
    ])('a client managing itself cannot %s: 400 invalid_client_metadata naming minimum_acr, nothing written, still enforced', async (_case, registered, next) => {
      const client = await register({ ...METADATA, minimum_acr: registered });
      const before = await row(client.id);
      const auditBefore = await auditOf(client.id);
      const reply = await call('PUT', `/register/${client.id}`, client.rat, { ...METADATA, client_id: client.id, minimum_acr: next });
      expect({ status: reply.status, error: reply.json.error }).toEqual({ status: 400, error: 'invalid_client_metadata' });
      expect(reply.json.error_description).toEqual(expect.stringMatching(/^minimum_acr .*only an administrator/));
      expect(await row(client.id)).toEqual(before);
      expect(await auditOf(client.id)).toEqual(auditBefore);
      const { browser } = await passwordOnlySession();
      const target: RegisteredClient = { clientId: client.id, redirectUri: 'https://bank.example/cb' };
      expect(levelAsked(await browser.get(url(target, newPkce(), { acr_values: PWD })))).toBe(registered);
    });

    it('a client may raise its own floor; an administrator may lower it, audited under its name', async () => {
      const client = await register({ ...METADATA, minimum_acr: MFA });
      const raised = await call('PUT', `/register/${client.id}`, client.rat, { ...METADATA, client_id: client.id, minimum_acr: PHR });
      expect(raised.status).toBe(200);
      expect(raised.json.minimum_acr).toBe(PHR);
      const lowered = await call('PUT', `/register/${client.id}`, adminToken, { ...METADATA, client_id: client.id });
      expect(lowered.status).toBe(200);
      expect(lowered.json.minimum_acr).toBeUndefined();
      const [latest] = await auditOf(client.id);
      expect(latest).toMatchObject({ action: 'client.updated', details: { changes: { minimum_acr: { old: PHR } } } });
      expect(latest.actor).not.toBe(`client:${client.id}`);
    });
  });

  // Last: it drops and re-adds the column under the running app.
  it('clients registered before the floor existed keep what --require-mfa promised: default_acr_values naming mfa or phr become the floor, their weakest (migration 1766600000000)', async () => {
    const Migration = MIGRATIONS.find((migration) => new migration().name === 'ClientMinimumAcr1766600000000');
    expect(Migration).toBeDefined();
    const registered = async (defaults?: string[]) => (await clientWith(defaults ? { default_acr_values: defaults } : {})).clientId;
    const ids = { mfa: await registered([MFA]), phr: await registered([PHR]), both: await registered([PHR, MFA]), withPassword: await registered([PWD, MFA]), none: await registered() };
    const runner = app.dataSource.createQueryRunner();
    try {
      const migration = new Migration!();
      await migration.down(runner);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    const floors = (await app.dataSource.createQueryBuilder().select(['c.id AS id', 'c.minimum_acr AS floor']).from('clients', 'c').getRawMany<{ id: string; floor: string | null }>()).reduce<Record<string, string | null>>(
      (all, { id, floor }) => ({ ...all, [id]: floor }),
      {},
    );
    expect({ mfa: floors[ids.mfa], phr: floors[ids.phr], both: floors[ids.both], withPassword: floors[ids.withPassword], none: floors[ids.none] }).toEqual({ mfa: MFA, phr: PHR, both: MFA, withPassword: null, none: null });
  });
});
