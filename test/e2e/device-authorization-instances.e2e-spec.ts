/**
 * Issue 35's check of the device authorization grant on three instances of one database
 * (PostgreSQL when TEST_DATABASE_URL names one; SQLite otherwise, where the same holds trivially):
 * the device asks on one instance, the person approves on another, the device (oauth4webapi, then
 * openid-client, unmodified, their requests sent to the third) polls a third; the poll interval is kept in the
 * database, so polling two instances in turn is still too fast; concurrent polls on all three
 * redeem the device code once; and the person's sign-out on one instance ends the device's access
 * on every instance, though each had its token in its cache.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { ClientsService } from '../../src/clients/clients.service.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer, startAnotherInstance } from '../helpers/app-at-issuer.js';
import { Browser } from '../helpers/browser.js';
import { decideDevice, DEVICE_CODE_GRANT, pollToken, requestDeviceAuthorization, signOut } from '../helpers/device.js';
import type { RegisteredClient, TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { expectTokenError } from '../helpers/token-assertions.js';
import { within } from '../helpers/within.js';

describe('the device authorization grant on three instances (issue 35)', () => {
  let first: NestFastifyApplication;
  const others: NestFastifyApplication[] = [];
  let bases: URL[];
  let user: TestUser;

  async function register(): Promise<RegisteredClient> {
    const { client } = await first.get(ClientsService).create({ name: 'Kiosk', redirectUris: [], isPublic: true, scope: 'notes:read', grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'] });
    return { clientId: client.id, redirectUri: '' };
  }

  const readNotes = (base: URL, token: string): Promise<Response> => fetch(new URL('/api/v1/notes', base), { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    process.env.DEVICE_CODE_INTERVAL_SECONDS = '1';
    process.env.RATE_LIMIT_CLIENT_PER_MINUTE = '0';
    let issuer: URL;
    ({ nest: first, issuer } = await startAtIssuer());
    bases = [issuer];
    // Two more instances on the same database and issuer, as behind a load balancer.
    for (let i = 0; i < 2; i++) {
      const { nest, baseUrl } = await startAnotherInstance();
      others.push(nest);
      bases.push(new URL(baseUrl));
    }
    user = { username: `dana_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
    await first.get(UsersService).create(user.username, user.password);
  });
  afterAll(async () => {
    delete process.env.DEVICE_CODE_INTERVAL_SECONDS;
    for (const nest of others) await nest.close();
    await first?.close();
    await dropTestDatabase();
  });

  it('oauth4webapi asks on the first instance, the person approves on the second, the device polls the third and gets its tokens', async () => {
    const registered = await register();
    const client: oauth.Client = { client_id: registered.clientId };
    const as = await oauth.processDiscoveryResponse(bases[0], await oauth.discoveryRequest(bases[0], { algorithm: 'oidc', [oauth.allowInsecureRequests]: true }));
    const toThird: typeof fetch = (url, init) => fetch(String(url).replace(bases[0].origin, bases[2].origin), init);
    const device = await oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, oauth.None(), { scope: 'openid notes:read' }, { [oauth.allowInsecureRequests]: true }));
    const poll = async () => oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, oauth.None(), device.device_code, { [oauth.allowInsecureRequests]: true, [oauth.customFetch]: toThird }));
    await expect(poll()).rejects.toMatchObject({ error: 'authorization_pending' });

    await decideDevice(new Browser(bases[1].origin), user, device.user_code);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const tokens = await poll();
    expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({ aud: registered.clientId, sid: expect.any(String) });
    for (const base of bases) expect((await readNotes(base, tokens.access_token)).status).toBe(200);
  });

  it('openid-client discovers and asks on the first instance, the person approves on the second, pollDeviceAuthorizationGrant polls the third and gets its tokens', async () => {
    const registered = await register();
    const config = await oidc.discovery(bases[0], registered.clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid notes:read' });
    // From here on the library's requests go to the third instance; each poll's instance and answer are recorded.
    const polls: { origin: string; heard: string }[] = [];
    config[oidc.customFetch] = async (url, options) => {
      const response = await fetch(url.replace(bases[0].origin, bases[2].origin), options as RequestInit);
      polls.push({ origin: new URL(response.url).origin, heard: response.ok ? 'tokens' : ((await response.clone().json()) as { error: string }).error });
      return response;
    };
    const polling = oidc.pollDeviceAuthorizationGrant(config, device);
    // The person approves once the device has heard authorization_pending from the third instance.
    expect(await within(5_000, () => Promise.resolve(polls.length > 0))).toBe(true);
    await decideDevice(new Browser(bases[1].origin), user, device.user_code);
    const tokens = await polling;

    // Every poll on the third instance: authorization_pending (more than once if the approval took longer than the interval), then the tokens.
    expect(new Set(polls.map((p) => p.origin))).toEqual(new Set([bases[2].origin]));
    expect(polls.at(-1)?.heard).toBe('tokens');
    expect(new Set(polls.slice(0, -1).map((p) => p.heard))).toEqual(new Set(['authorization_pending']));
    expect(tokens.claims()).toMatchObject({ iss: bases[0].origin, aud: registered.clientId, acr: 'urn:latchkey:acr:pwd', amr: ['pwd'], sid: expect.any(String) });
    for (const base of bases) expect((await readNotes(base, tokens.access_token)).status).toBe(200);
  });

  it('the interval is kept in the database: a poll on one instance right after one on another is told to slow down', async () => {
    const client = await register();
    const { device_code } = (await requestDeviceAuthorization(bases[0], client)).body as { device_code: string };
    expectTokenError(await pollToken(bases[1], client, device_code), 400, 'authorization_pending');
    expectTokenError(await pollToken(bases[2], client, device_code), 400, 'slow_down');
  });

  it('concurrent polls on all three instances redeem the device code once', async () => {
    const client = await register();
    const { device_code, user_code } = (await requestDeviceAuthorization(bases[0], client)).body as { device_code: string; user_code: string };
    await decideDevice(new Browser(bases[2].origin), user, user_code);
    const replies = await Promise.all(Array.from({ length: 9 }, (_, i) => pollToken(bases[i % 3], client, device_code)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const lost of replies.filter((r) => r.status !== 200)) expectTokenError(lost, 400, 'invalid_grant');
  });

  it('the person signs out on one instance: the device\'s token stops working on every instance', async () => {
    const client = await register();
    const browser = new Browser(bases[1].origin);
    const { device_code, user_code } = (await requestDeviceAuthorization(bases[0], client)).body as { device_code: string; user_code: string };
    await decideDevice(browser, user, user_code);
    const tokens = await pollToken(bases[2], client, device_code);
    expect(tokens.status).toBe(200);
    const token = tokens.body.access_token as string;
    // Each instance reads it once, and keeps it.
    for (const base of bases) expect((await readNotes(base, token)).status).toBe(200);
    await signOut(browser);
    const refused = async (): Promise<boolean> => (await Promise.all(bases.map((base) => readNotes(base, token)))).every((r) => r.status === 401);
    expect(await within(1_000, refused)).toBe(true);
  });
});
