/**
 * Rate limits (issue #5): per client on the client-authenticated endpoints, per access token on the
 * data API, and growing waits after failed sign-ins per address and username. Every refusal is a
 * 429 with Retry-After and an `error` body. In memory here; shared through Redis in
 * rate-limits-redis.e2e-spec.ts.
 */
import { jest } from '@jest/globals';
import { obtainAccessToken } from '../helpers/api-client.js';
import { Browser, hiddenFields, type Page } from '../helpers/browser.js';
import { tokenRequest } from '../helpers/oauth-flow.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

describe('rate limits', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start({
      RATE_LIMIT_CLIENT_PER_MINUTE: '3',
      RATE_LIMIT_API_PER_MINUTE: '3',
      LOGIN_FREE_FAILURES: '2',
      LOGIN_IP_FREE_FAILURES: '6',
      LOGIN_MAX_DELAY_SECONDS: '4',
      // X-Forwarded-For from the test itself stands for clients at different addresses.
      TRUST_PROXY: '127.0.0.1',
    });
  });
  afterAll(async () => app?.stop());

  describe('per client on /token, /introspect and /revoke', () => {
    let client: RegisteredClient;
    let other: RegisteredClient;

    beforeAll(async () => {
      client = await app.createClient({ grantTypes: ['client_credentials'], scope: 'notes:read tokens:introspect' });
      other = await app.createClient({ grantTypes: ['client_credentials'], scope: 'notes:read' });
    });

    it('answers the request over the limit with 429, Retry-After and an error body, and no other client pays for it', async () => {
      // Failed authentications are refused before the limit counts: a stranger cannot spend a client's budget.
      for (let i = 0; i < 5; i++) {
        expect((await tokenRequest(app, { ...client, clientSecret: 'wrong' }, { grant_type: 'client_credentials' })).status).toBe(401);
      }
      for (let i = 0; i < 3; i++) {
        expect((await tokenRequest(app, client, { grant_type: 'client_credentials' })).status).toBe(200);
      }
      const refused = await tokenRequest(app, client, { grant_type: 'client_credentials' });
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ error: 'too_many_requests', error_description: expect.stringMatching(/^This client may make 3 requests a minute to this endpoint\. Try again in \d+ seconds?\.$/) });
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.headers.get('cache-control')).toBe('no-store');

      expect((await tokenRequest(app, other, { grant_type: 'client_credentials' })).status).toBe(200);
    });

    it('counts each endpoint apart: the client that spent /token can still introspect', async () => {
      const token = (await tokenRequest(app, other, { grant_type: 'client_credentials' })).body.access_token as string;
      const introspect = () =>
        fetch(app.url('/introspect'), {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` },
          body: new URLSearchParams({ token }).toString(),
        });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await introspect()).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    });
  });

  describe('per access token on /api/v1', () => {
    it('refuses the token over the limit with 429 and Retry-After, while another token of the same person goes on', async () => {
      const client = await app.createClient({ scope: 'notes:read notes:write' });
      const user = await app.createUser();
      const first = await obtainAccessToken(app, client, user, 'notes:read');
      const second = await obtainAccessToken(app, client, user, 'notes:read');
      const list = (token: string) => fetch(app.url('/api/v1/notes'), { headers: { Authorization: `Bearer ${token}` } });

      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await list(first)).status);
      expect(statuses).toEqual([200, 200, 200]);
      const refused = await list(first);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await refused.json()).toEqual({ error: 'too_many_requests', error_description: expect.stringContaining('This access token may make 3 requests a minute.') });

      expect((await list(second)).status).toBe(200);
      // A token that is not valid is refused as such (401), not counted.
      expect((await list('not-a-token')).status).toBe(401);
    });
  });

  describe('failed sign-ins', () => {
    let user: TestUser;
    let now: number;

    beforeAll(async () => {
      user = await app.createUser();
      now = Date.now();
      jest.spyOn(app.clock, 'now').mockImplementation(() => new Date(now));
    });
    afterAll(() => jest.restoreAllMocks());

    /** Opens the login page as a browser at `address`, then submits it with `password`. */
    async function signIn(address: string, username: string, password: string): Promise<Page> {
      const browser = new Browser(app.baseUrl);
      const headers = { 'X-Forwarded-For': address };
      const form = await browser.get('/login', headers);
      expect(form.status).toBe(200);
      return browser.post('/login', { ...hiddenFields(form.body, '/login'), username, password }, headers);
    }

    it('makes each attempt past the free failures wait, doubling, and refuses it unchecked until then', async () => {
      const attacker = '203.0.113.7';
      expect((await signIn(attacker, user.username, 'guess 1')).status).toBe(401);
      expect((await signIn(attacker, user.username, 'guess 2')).status).toBe(401);

      // The second failure used up the free ones: the next attempt must wait 1 s, even with the right password.
      const waiting = await signIn(attacker, user.username, user.password);
      expect(waiting.status).toBe(429);
      expect(waiting.headers.get('retry-after')).toBe('1');
      expect(waiting.headers.get('content-type')).toMatch(/^text\/html/);
      expect(waiting.body).toContain('Too many failed attempts. Try again in 1 second.');

      now += 1000;
      expect((await signIn(attacker, user.username, 'guess 3')).status).toBe(401);
      expect((await signIn(attacker, user.username, 'guess 4')).headers.get('retry-after')).toBe('2');
      now += 2000;
      expect((await signIn(attacker, user.username, 'guess 5')).status).toBe(401);
      expect((await signIn(attacker, user.username, 'guess 6')).headers.get('retry-after')).toBe('4');
      now += 4000;
      expect((await signIn(attacker, user.username, 'guess 7')).status).toBe(401);
      // LOGIN_MAX_DELAY_SECONDS caps the doubling.
      expect((await signIn(attacker, user.username, 'guess 8')).headers.get('retry-after')).toBe('4');
    });

    it('lets the same person sign in from elsewhere meanwhile, and forgets the failures after a success', async () => {
      const owner = '198.51.100.20';
      expect((await signIn(owner, user.username, user.password)).status).toBe(303);

      const typo = '198.51.100.21';
      expect((await signIn(typo, user.username, 'typo 1')).status).toBe(401);
      expect((await signIn(typo, user.username, 'typo 2')).status).toBe(401);
      now += 1000;
      expect((await signIn(typo, user.username, user.password)).status).toBe(303);
      // The success wiped that address's failures for this username: one more typo is free again.
      expect((await signIn(typo, user.username, 'typo 3')).status).toBe(401);
      expect((await signIn(typo, user.username, user.password)).status).toBe(303);
    });

    it('slows one address trying one password on many usernames (LOGIN_IP_FREE_FAILURES)', async () => {
      const stuffer = '192.0.2.99';
      const statuses = [];
      for (let i = 0; i < 7; i++) statuses.push((await signIn(stuffer, `someone_${i}`, 'Summer2026!')).status);
      // Six free failures for the address, whatever the usernames; the seventh attempt waits.
      expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);
      // Another address is not affected.
      expect((await signIn('192.0.2.100', 'someone_0', 'Summer2026!')).status).toBe(401);
    });

    it('counts nothing for an empty password: it guesses nothing', async () => {
      const address = '192.0.2.150';
      for (let i = 0; i < 5; i++) expect((await signIn(address, user.username, '')).status).toBe(401);
      expect((await signIn(address, user.username, user.password)).status).toBe(303);
    });
  });
});
