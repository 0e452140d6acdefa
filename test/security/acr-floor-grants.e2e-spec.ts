/**
 * Threat: a registered sign-in level passed over by the grants that issue a person's token without
 * the authorization endpoint (issue 43, finding 1 follow-up). The password grant gave tokens on a
 * password alone to a client whose floor (minimum_acr) asks for a second factor, and to a person an
 * administrator requires one of; a refresh token from before a floor was raised kept refreshing at
 * the lower level; an exchanging client with a floor accepted a password-only subject token; a
 * device approved before the floor was raised got its tokens.
 * Defence: one function (meetsRequiredAcr, next to requiredAcr) says whether a grant's recorded
 * sign-in (its amr) meets the client's current floor and the person's current requirement
 * (users:update --require-mfa, MFA_REQUIRED); every grant that issues a person's token asks it
 * before anything is written: password, refresh_token, token exchange, device_code, and the
 * authorization code at redemption.
 */
import { jest } from '@jest/globals';
import type { Client } from '../../src/clients/client.entity.js';
import { CLI_ADMINISTRATOR } from '../../src/clients/client-change-policy.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import type { GrantType } from '../../src/common/oauth.constants.js';
import { ResourceServersService } from '../../src/resource-servers/resource-servers.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { Browser } from '../helpers/browser.js';
import { DEVICE_CODE_GRANT, decideDevice, pollToken, requestDeviceAuthorization } from '../helpers/device.js';
import { authorizeAsUser, authorizeUrl, newPkce, obtainCode, redirectParams, tokenRequest, type TokenResult } from '../helpers/oauth-flow.js';
import { enrolFrom, redeemFrom, signInWithPassword } from '../helpers/second-factor.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';
import { expectTokenError } from '../helpers/token-assertions.js';
import { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE } from '../helpers/token-exchange.js';
import { totpCode } from '../helpers/totp.js';

const MFA = 'urn:latchkey:acr:mfa';
const PHR = 'urn:latchkey:acr:phr';
const ORDERS = 'https://orders.example.com/api';
/** What a refused password grant says: a second factor is needed, which only the browser flow can ask for. */
const NEEDS_BROWSER = /second factor.*(authorization code|browser)/i;
/** What a refused refresh, exchange or poll says. */
const SIGN_IN_AGAIN = /no longer meets what this client requires.*sign in again/i;

/** Rows a refused request must leave as it found them. */
async function rows(app: TestApp, clientId?: string): Promise<{ tokens: number; consents: number; audit: number }> {
  const count = (table: string) => {
    const query = app.dataSource.createQueryBuilder().from(table, 't');
    return (clientId && table !== 'audit_events' ? query.where('t.client_id = :id', { id: clientId }) : query).getCount();
  };
  return { tokens: await count('tokens'), consents: await count('consents'), audit: await count('audit_events') };
}

/** An administrator sets the client's floor (ClientsService.update, as the CLI and RFC 7592 with an admin token do); undefined removes it. */
async function setFloor(app: TestApp, clientId: string, minimumAcr: string | undefined): Promise<void> {
  const clients = app.app.get(ClientsService);
  const client: Client = (await clients.findById(clientId))!;
  await clients.update(
    client,
    { name: client.name, redirectUris: client.redirectUris, scope: client.scope, isPublic: client.isPublic, grantTypes: client.grantTypes, openId: minimumAcr ? { minimum_acr: minimumAcr } : {} },
    CLI_ADMINISTRATOR,
  );
}

const refresh = (app: TestApp, client: RegisteredClient, refreshToken: string): Promise<TokenResult> => tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: refreshToken });

/** `attempt` is refused with 400 `error`, a description matching `says`, and writes nothing. */
async function refused(app: TestApp, attempt: () => Promise<TokenResult>, error: string, says: RegExp, clientId?: string): Promise<void> {
  const before = await rows(app, clientId);
  const reply = await attempt();
  expectTokenError(reply, 400, error);
  expect(reply.body.error_description).toMatch(says);
  expect(await rows(app, clientId)).toEqual(before);
}

describe('a registered sign-in level is a floor on every grant that issues a person\'s token (issue 43; RFC 6749 §5.2)', () => {
  let app: TestApp;
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;

  beforeAll(async () => {
    app = await TestApp.start({ RATE_LIMIT_CLIENT_PER_MINUTE: '0', DEVICE_CODE_INTERVAL_SECONDS: '1', PASSWORD_GRANT_REFRESH_TOKENS: 'true' });
    jest.spyOn(app.clock, 'now').mockImplementation(() => new Date(now()));
  }, 180_000);
  afterAll(async () => app?.stop());
  beforeEach(() => {
    offsetMs += 30_000;
  });

  /** A person with one-time codes enrolled (in a browser of their own); the key. */
  async function personWithCodes(): Promise<{ user: TestUser; key: string }> {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    await signInWithPassword(browser, user);
    const { key } = await enrolFrom(browser, await browser.get('/account/one-time-codes'), now());
    offsetMs += 30_000;
    return { user, key };
  }

  /** The person signs in with the password and the code to `client` (code flow with PKCE); the token response. */
  async function signedInWithCode(client: RegisteredClient, user: TestUser, key: string, scope = 'notes:read'): Promise<Record<string, unknown>> {
    const browser = new Browser(app.baseUrl);
    const pkce = newPkce();
    const request = authorizeUrl(client, { scope, state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    const afterPassword = await browser.submit(await browser.get(request), '/login', { username: user.username, password: user.password });
    expect(afterPassword.location).toBe('/login/code');
    const back = await browser.submit(await browser.get('/login/code'), '/login/code', { code: totpCode(key, now()) });
    return redeemFrom(app, browser, await browser.get(back.location!), client, pkce);
  }

  /** The person signs in with the password only to `client`; the token response. */
  async function signedInWithPassword(client: RegisteredClient, user: TestUser, scope = 'notes:read'): Promise<Record<string, unknown>> {
    const { code, pkce } = await obtainCode(app, client, user, { scope });
    const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
    expect(tokens.status).toBe(200);
    return tokens.body;
  }

  describe('the password grant (RFC 6749 §4.3) reaches a password only: refused where more is required', () => {
    const passwordClient = (minimumAcr?: string, defaults?: string[]) =>
      app.createClient({ name: 'Legacy Desktop App', redirectUris: [], scope: 'notes:read', grantTypes: ['password', 'refresh_token'] as GrantType[], openId: { minimum_acr: minimumAcr, default_acr_values: defaults } as never });

    it.each<[string, { minimumAcr?: string; defaults?: string[]; person?: boolean }, 'tokens' | 'refused']>([
      ['no floor and no requirement of the person: tokens', {}, 'tokens'],
      ["the client's default_acr_values name mfa: a default, which a request may lower, not a floor: tokens", { defaults: [MFA] }, 'tokens'],
      ["the client's floor is mfa (clients:create --require-mfa)", { minimumAcr: MFA }, 'refused'],
      ["the client's floor is phr", { minimumAcr: PHR }, 'refused'],
      ['an administrator requires a second factor of the person (users:update --require-mfa)', { person: true }, 'refused'],
    ])('%s', async (_case, { minimumAcr, defaults, person }, outcome) => {
      const client = await passwordClient(minimumAcr, defaults);
      const user = await app.createUser();
      if (person) await app.app.get(UsersService).updateProfile(user.username, { requireMfa: true });
      const attempt = () => tokenRequest(app, client, { grant_type: 'password', username: user.username, password: user.password });
      if (outcome === 'tokens') {
        const reply = await attempt();
        expect(reply.status).toBe(200);
        expect(reply.body.refresh_token).toBeDefined();
        return;
      }
      await refused(app, attempt, 'invalid_grant', NEEDS_BROWSER, client.clientId);
      expect(await rows(app, client.clientId)).toMatchObject({ tokens: 0, consents: 0 });
    });

    it('a person who enrolled a second factor of their own accord: the browser asks for it at every sign-in, so a password alone is refused here too', async () => {
      const client = await passwordClient();
      const { user } = await personWithCodes();
      await refused(app, () => tokenRequest(app, client, { grant_type: 'password', username: user.username, password: user.password }), 'invalid_grant', NEEDS_BROWSER, client.clientId);
    });

    it('a wrong password to a client with a floor is still "incorrect": the level is judged only for the person the password proves', async () => {
      const client = await passwordClient(MFA);
      const user = await app.createUser();
      const reply = await tokenRequest(app, client, { grant_type: 'password', username: user.username, password: 'wrong horse battery staple' });
      expectTokenError(reply, 400, 'invalid_grant');
      expect(reply.body.error_description).not.toMatch(NEEDS_BROWSER);
    });
  });

  describe('refresh_token (RFC 6749 §6): the grant\'s sign-in must still meet the current floor', () => {
    const codeClient = () => app.createClient({ name: 'Bank', redirectUris: ['https://bank.example/cb'], scope: 'notes:read', grantTypes: ['authorization_code', 'refresh_token'] as GrantType[] });

    it('a password-only grant stops refreshing once the client\'s floor is raised: invalid_grant, nothing written; the token is not revoked (it refreshes again when an administrator lowers the floor)', async () => {
      const client = await codeClient();
      const user = await app.createUser();
      const first = await signedInWithPassword(client, user);
      const before = await refresh(app, client, first.refresh_token as string);
      expect(before.status).toBe(200);
      const refreshToken = before.body.refresh_token as string;

      await setFloor(app, client.clientId, MFA);
      await refused(app, () => refresh(app, client, refreshToken), 'invalid_grant', SIGN_IN_AGAIN, client.clientId);

      await setFloor(app, client.clientId, undefined);
      expect((await refresh(app, client, refreshToken)).status).toBe(200);
    });

    it('a password-only grant stops refreshing once an administrator requires a second factor of the person', async () => {
      const client = await codeClient();
      const user = await app.createUser();
      const first = await signedInWithPassword(client, user);
      await app.app.get(UsersService).updateProfile(user.username, { requireMfa: true });
      await refused(app, () => refresh(app, client, first.refresh_token as string), 'invalid_grant', SIGN_IN_AGAIN, client.clientId);
    });

    it('a grant signed in with a second factor keeps refreshing under a floor of mfa and a person\'s requirement, not under a floor of phr', async () => {
      const client = await codeClient();
      const { user, key } = await personWithCodes();
      const first = await signedInWithCode(client, user, key);
      await setFloor(app, client.clientId, MFA);
      await app.app.get(UsersService).updateProfile(user.username, { requireMfa: true });
      const next = await refresh(app, client, first.refresh_token as string);
      expect(next.status).toBe(200);

      await setFloor(app, client.clientId, PHR);
      await refused(app, () => refresh(app, client, next.body.refresh_token as string), 'invalid_grant', SIGN_IN_AGAIN, client.clientId);
    });
  });

  describe('token exchange (RFC 8693 §2.2.2): the exchanging client\'s floor against the subject token\'s sign-in', () => {
    let gateway: RegisteredClient;
    let orders: RegisteredClient;
    let self: string;
    const exchange = (caller: RegisteredClient, subjectToken: string, resource: string) =>
      tokenRequest(app, caller, { grant_type: TOKEN_EXCHANGE, subject_token: subjectToken, subject_token_type: ACCESS_TOKEN_TYPE, resource });

    beforeAll(async () => {
      gateway = await app.createClient({ name: 'Gateway', redirectUris: ['https://gateway.example/cb'], scope: 'notes:read', grantTypes: ['authorization_code', TOKEN_EXCHANGE] as GrantType[] });
      orders = await app.createClient({ name: 'Orders', redirectUris: [], scope: 'tokens:introspect notes:read', grantTypes: ['client_credentials', TOKEN_EXCHANGE] as GrantType[] });
      const servers = app.app.get(ResourceServersService);
      await servers.register({ uri: ORDERS, name: 'Orders', introspector: orders.clientId }, 'test');
      self = servers.localResource;
    });

    it('a password-only subject token: exchanged while the services have no floor; refused with invalid_request, nothing written, once the exchanging service has one (either service)', async () => {
      const user = await app.createUser();
      const personToken = (await signedInWithPassword(gateway, user)).access_token as string;
      const forOrders = await exchange(gateway, personToken, ORDERS);
      expect(forOrders.status).toBe(200);
      const ordersToken = forOrders.body.access_token as string;
      expect((await exchange(orders, ordersToken, self)).status).toBe(200);

      await setFloor(app, orders.clientId, MFA);
      await refused(app, () => exchange(orders, ordersToken, self), 'invalid_request', SIGN_IN_AGAIN);
      await setFloor(app, gateway.clientId, MFA);
      await refused(app, () => exchange(gateway, personToken, ORDERS), 'invalid_request', SIGN_IN_AGAIN);
      await setFloor(app, gateway.clientId, undefined);
      await setFloor(app, orders.clientId, undefined);
    });

    it('a subject token from a sign-in with a second factor passes a floor of mfa', async () => {
      const { user, key } = await personWithCodes();
      const personToken = (await signedInWithCode(gateway, user, key)).access_token as string;
      await setFloor(app, orders.clientId, MFA);
      const forOrders = await exchange(gateway, personToken, ORDERS);
      expect(forOrders.status).toBe(200);
      expect((await exchange(orders, forOrders.body.access_token as string, self)).status).toBe(200);
      await setFloor(app, orders.clientId, undefined);
    });
  });

  it('device_code (RFC 8628 §3.4): a floor raised between the approval and the poll is invalid_grant, nothing written', async () => {
    const client = await app.createClient({ name: 'TV app', redirectUris: [], scope: 'notes:read', isPublic: true, grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'] as GrantType[] });
    const user = await app.createUser();
    const approved = async (): Promise<string> => {
      const started = await requestDeviceAuthorization(app.baseUrl, client, { scope: 'notes:read' });
      const { device_code, user_code } = started.body as { device_code: string; user_code: string };
      await decideDevice(new Browser(app.baseUrl), user, user_code);
      return device_code;
    };
    expect((await pollToken(app.baseUrl, client, await approved())).status).toBe(200);

    const deviceCode = await approved();
    await setFloor(app, client.clientId, MFA);
    await refused(app, () => pollToken(app.baseUrl, client, deviceCode), 'invalid_grant', SIGN_IN_AGAIN, client.clientId);
  });

  it('authorization_code (RFC 6749 §4.1.3): a floor raised between the authorization and the redemption is invalid_grant, and no token is issued', async () => {
    const client = await app.createClient({ name: 'Shop', redirectUris: ['https://shop.example/cb'], scope: 'notes:read', grantTypes: ['authorization_code', 'refresh_token'] as GrantType[] });
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    const pkce = newPkce();
    const page = await authorizeAsUser(browser, user, authorizeUrl(client, { scope: 'notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
    const code = redirectParams(page).get('code')!;
    await setFloor(app, client.clientId, MFA);
    const redeem = () => tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
    const reply = await redeem();
    expectTokenError(reply, 400, 'invalid_grant');
    expect(reply.body.error_description).toMatch(SIGN_IN_AGAIN);
    expect((await rows(app, client.clientId)).tokens).toBe(0);
  });
});

describe('MFA_REQUIRED turned on later (a server-wide requirement) holds the password grant and older refresh tokens to it', () => {
  let app: TestApp;
  let client: RegisteredClient;
  let user: TestUser;
  let refreshToken: string;
  const env = { RATE_LIMIT_CLIENT_PER_MINUTE: '0', PASSWORD_GRANT_REFRESH_TOKENS: 'true' };

  beforeAll(async () => {
    // The same database before and after: the server restarts with the setting turned on.
    const before = await TestApp.start(env);
    try {
      client = await before.createClient({ name: 'Legacy Desktop App', redirectUris: [], scope: 'notes:read', grantTypes: ['password', 'refresh_token'] as GrantType[] });
      user = await before.createUser();
      const reply = await tokenRequest(before, client, { grant_type: 'password', username: user.username, password: user.password });
      expect(reply.status).toBe(200);
      const refreshed = await refresh(before, client, reply.body.refresh_token as string);
      expect(refreshed.status).toBe(200);
      refreshToken = refreshed.body.refresh_token as string;
    } finally {
      await before.app.close();
    }
    app = await TestApp.start({ ...env, MFA_REQUIRED: 'true' });
  }, 180_000);
  afterAll(async () => {
    await app?.stop();
    delete process.env.MFA_REQUIRED;
  });

  it('the password grant is invalid_grant, nothing written', async () => {
    await refused(app, () => tokenRequest(app, client, { grant_type: 'password', username: user.username, password: user.password }), 'invalid_grant', NEEDS_BROWSER, client.clientId);
  });

  it('a refresh token from a password-only sign-in is invalid_grant, nothing written', async () => {
    await refused(app, () => refresh(app, client, refreshToken), 'invalid_grant', SIGN_IN_AGAIN, client.clientId);
  });
});
