/**
 * The device authorization grant (RFC 8628, issue 35) with real clients: oauth4webapi's and
 * openid-client's device functions, unmodified, against the real app, while a person approves at
 * the verification page by form posts; an `openid` request gets an ID token (acr, amr, auth_time,
 * sid), a client registered for refresh gets a refresh token, a DPoP proof binds the tokens. Then
 * what the device hears while it polls (§3.5: authorization_pending, slow_down, access_denied,
 * expired_token), a device code redeemed once under concurrent polls and refused after, the
 * metadata (§4), the audit trail and the purge.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AuditService } from '../../src/audit/audit.service.js';
import type { NewClient } from '../../src/clients/client-information.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { Clock } from '../../src/common/clock.js';
import { PurgeService } from '../../src/housekeeping/purge.service.js';
import { Browser } from '../helpers/browser.js';
import { decideDevice, DEVICE_CODE_GRANT, pollToken, requestDeviceAuthorization, type Reply } from '../helpers/device.js';
import { getNotes, withNonceRetry } from '../helpers/dpop.js';
import { startWithUser } from '../helpers/oauth4webapi.js';
import type { RegisteredClient, TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { expectTokenError } from '../helpers/token-assertions.js';

/** oauth4webapi refuses http:// unless told; we test over loopback. */
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

describe('Device authorization grant (RFC 8628)', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let as: oauth.AuthorizationServer;
  let user: TestUser;
  let userId: string;

  async function register(options: Partial<NewClient> = {}): Promise<RegisteredClient> {
    const { client, secret } = await nest.get(ClientsService).create({ name: 'Terminal', redirectUris: [], scope: 'notes:read notes:write', grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'], ...options });
    return { clientId: client.id, clientSecret: secret, redirectUri: '' };
  }

  /** A device authorization request that must succeed; its §3.2 answer. */
  async function started(client: RegisteredClient, params: Record<string, string> = {}): Promise<{ device_code: string; user_code: string; interval: number }> {
    const reply = await requestDeviceAuthorization(issuer, client, params);
    expect(reply.status).toBe(200);
    return reply.body as { device_code: string; user_code: string; interval: number };
  }

  const rowOf = async (deviceCode: string): Promise<Record<string, unknown>> => {
    const { createHash } = await import('node:crypto');
    const rows = (await nest.get<DataSource>(getDataSourceToken()).query(`SELECT * FROM "device_authorizations" WHERE "device_code_hash" = '${createHash('sha256').update(deviceCode).digest('hex')}'`)) as Record<string, unknown>[];
    return rows[0];
  };

  beforeAll(async () => {
    // One second between polls keeps the libraries' own waits short.
    process.env.DEVICE_CODE_INTERVAL_SECONDS = '1';
    process.env.RATE_LIMIT_CLIENT_PER_MINUTE = '0';
    ({ nest, issuer, as, user, userId } = await startWithUser());
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    delete process.env.DEVICE_CODE_INTERVAL_SECONDS;
    await nest?.close();
    await dropTestDatabase();
  });

  it('the metadata names the device authorization endpoint and the grant (§4)', () => {
    expect(as.device_authorization_endpoint).toBe(new URL('/device_authorization', issuer).href);
    expect(as.grant_types_supported).toContain(DEVICE_CODE_GRANT);
  });

  it('§3.2: a high-entropy device_code, an 8-consonant user_code, the verification URIs, expires_in 600 and the interval', async () => {
    const reply = await requestDeviceAuthorization(issuer, await register({ isPublic: true }));
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(reply.body).toEqual({
      device_code: expect.stringMatching(/^lk_dc_[A-Za-z0-9_-]{43}$/),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: new URL('/device', issuer).href,
      verification_uri_complete: `${new URL('/device', issuer).href}?user_code=${reply.body.user_code as string}`,
      expires_in: 600,
      interval: 1,
    });
    // Stored hashed: neither code is in the row.
    const row = await rowOf(reply.body.device_code as string);
    expect(JSON.stringify(row)).not.toContain(reply.body.device_code as string);
    expect(JSON.stringify(row)).not.toContain((reply.body.user_code as string).replace('-', ''));
  });

  it('oauth4webapi, a public client with openid: the person approves, the device gets an access token, a refresh token and an ID token with acr, amr, auth_time and sid', async () => {
    const registered = await register({ isPublic: true });
    const client: oauth.Client = { client_id: registered.clientId };
    const device = await oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, oauth.None(), { scope: 'openid notes:read' }, INSECURE));
    const poll = async () => oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, oauth.None(), device.device_code, INSECURE));
    await expect(poll()).rejects.toMatchObject({ error: 'authorization_pending' });

    const done = await decideDevice(new Browser(issuer.origin), user, device.user_code);
    expect(done.status).toBe(200);
    expect(done.body).toContain('Go back to your device');

    await new Promise((resolve) => setTimeout(resolve, device.interval! * 1000));
    const tokens = await poll();
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'notes:read openid', refresh_token: expect.stringMatching(/^lk_rt_/) });
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims).toMatchObject({ iss: as.issuer, aud: registered.clientId, acr: 'urn:latchkey:acr:pwd', amr: ['pwd'], auth_time: expect.any(Number), sid: expect.any(String) });
    expect((await getNotes(issuer, tokens.access_token, INSECURE)).status).toBe(200);

    // The refresh token works as any other (RFC 6749 §6), with an ID token again.
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, INSECURE));
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(oauth.getValidatedIdTokenClaims(refreshed)?.sub).toBe(claims.sub);
  });

  it('openid-client, a confidential client: initiateDeviceAuthorization and pollDeviceAuthorizationGrant while the person approves', async () => {
    const registered = await register({ grantTypes: [DEVICE_CODE_GRANT] });
    const config = await oidc.discovery(issuer, registered.clientId, undefined, oidc.ClientSecretBasic(registered.clientSecret!), { execute: [oidc.allowInsecureRequests] });
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid notes:read' });
    const polling = oidc.pollDeviceAuthorizationGrant(config, device);
    await decideDevice(new Browser(issuer.origin), user, device.user_code);
    const tokens = await polling;
    expect(tokens.access_token).toMatch(/^lk_at_/);
    // Registered without refresh_token: none is issued.
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.claims()).toMatchObject({ aud: registered.clientId, auth_time: expect.any(Number) });
    expect((await getNotes(issuer, tokens.access_token, INSECURE)).status).toBe(200);
  });

  it('openid-client: the person denies, and the poll ends with access_denied', async () => {
    const registered = await register({ isPublic: true });
    const config = await oidc.discovery(issuer, registered.clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'notes:read' });
    const polling = oidc.pollDeviceAuthorizationGrant(config, device);
    const done = await decideDevice(new Browser(issuer.origin), user, device.user_code, 'deny');
    expect(done.body).toContain('The device gets no access');
    await expect(polling).rejects.toMatchObject({ error: 'access_denied' });
  });

  it('DPoP (RFC 9449): a proof with the poll binds the device\'s access and refresh tokens to its key', async () => {
    const registered = await register({ isPublic: true });
    const client: oauth.Client = { client_id: registered.clientId };
    const dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const device = await oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, oauth.None(), { scope: 'notes:read' }, INSECURE));
    await decideDevice(new Browser(issuer.origin), user, device.user_code);
    const tokens = await withNonceRetry(async () => oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, oauth.None(), device.device_code, { DPoP: dpop, ...INSECURE })));
    expect(tokens.token_type).toBe('dpop');
    expect((await getNotes(issuer, tokens.access_token, { DPoP: dpop, ...INSECURE })).status).toBe(200);
    // Without the key: refused as a bearer token, and its refresh token is refused without a proof.
    await expect(getNotes(issuer, tokens.access_token, INSECURE)).rejects.toMatchObject({ status: 401 });
    await expect(oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, INSECURE))).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  describe('polling (§3.5)', () => {
    it('authorization_pending while the person has not decided; slow_down when polled faster than the interval, which grows by 5 s each time', async () => {
      const client = await register({ isPublic: true });
      const { device_code } = await started(client);
      expectTokenError(await pollToken(issuer, client, device_code), 400, 'authorization_pending');
      // At once again: too fast.
      expectTokenError(await pollToken(issuer, client, device_code), 400, 'slow_down');
      expect((await rowOf(device_code)).interval_seconds).toBe(6);
      // Two seconds later would have been on time before; the interval is now 6 s, counted from the last poll.
      const clock = nest.get(Clock);
      const now = Date.now();
      jest.spyOn(clock, 'now').mockReturnValue(new Date(now + 2_000));
      expectTokenError(await pollToken(issuer, client, device_code), 400, 'slow_down');
      expect((await rowOf(device_code)).interval_seconds).toBe(11);
      jest.spyOn(clock, 'now').mockReturnValue(new Date(now + 2_000 + 11_000));
      expectTokenError(await pollToken(issuer, client, device_code), 400, 'authorization_pending');
    });

    it('expired_token once the device_code has expired, approved or not', async () => {
      const client = await register({ isPublic: true });
      const { device_code, user_code } = await started(client);
      await decideDevice(new Browser(issuer.origin), user, user_code);
      jest.spyOn(nest.get(Clock), 'now').mockReturnValue(new Date(Date.now() + 601_000));
      expectTokenError(await pollToken(issuer, client, device_code), 400, 'expired_token');
    });

    it('a person cannot approve an expired code: the verification page says it is not valid', async () => {
      const client = await register({ isPublic: true });
      const { device_code, user_code } = await started(client);
      jest.spyOn(nest.get(Clock), 'now').mockReturnValue(new Date(Date.now() + 601_000));
      await expect(decideDevice(new Browser(issuer.origin), user, user_code)).rejects.toThrow(/Expected the consent page, got 400/);
      expect((await rowOf(device_code)).status).toBe('pending');
    });

    it('a device code is redeemed once under concurrent polls; a later poll with it is refused (invalid_grant)', async () => {
      const client = await register({ isPublic: true });
      const { device_code, user_code } = await started(client);
      await decideDevice(new Browser(issuer.origin), user, user_code);
      const replies: Reply[] = await Promise.all(Array.from({ length: 8 }, () => pollToken(issuer, client, device_code)));
      const won = replies.filter((r) => r.status === 200);
      expect(won).toHaveLength(1);
      for (const lost of replies.filter((r) => r.status !== 200)) expectTokenError(lost, 400, 'invalid_grant');
      expectTokenError(await pollToken(issuer, client, device_code), 400, 'invalid_grant');
      // The winner's tokens stay good: a second poll is the device's own, not a stolen code's.
      expect((await getNotes(issuer, won[0].body.access_token as string, INSECURE)).status).toBe(200);
      const tokens = (await nest.get<DataSource>(getDataSourceToken()).query(`SELECT COUNT(*) AS "n" FROM "tokens" WHERE "family_id" = '${(await rowOf(device_code)).id as string}'`)) as { n: number | string }[];
      expect(Number(tokens[0].n)).toBe(2);
    });

    it('a device_code of another client is unknown to this one (invalid_grant)', async () => {
      const owner = await register({ isPublic: true });
      const other = await register({ isPublic: true });
      const { device_code, user_code } = await started(owner);
      await decideDevice(new Browser(issuer.origin), user, user_code);
      expectTokenError(await pollToken(issuer, other, device_code), 400, 'invalid_grant');
      expect((await pollToken(issuer, owner, device_code)).status).toBe(200);
    });
  });

  it('the audit trail records approvals and denials, by whom, for which client', async () => {
    const client = await register({ isPublic: true });
    const allowed = await started(client);
    const denied = await started(client);
    await decideDevice(new Browser(issuer.origin), user, allowed.user_code, 'allow');
    await decideDevice(new Browser(issuer.origin), user, denied.user_code, 'deny');
    const events = (await nest.get(AuditService).list(200)).filter((e) => e.subject === `client:${client.clientId}` && e.action.startsWith('device.'));
    expect(events.map((e) => e.action).sort()).toEqual(['device.approved', 'device.denied']);
    for (const event of events) expect(event.actor).toBe(`user:${userId}`);
  });

  it('housekeeping purges expired device authorizations, decided or not', async () => {
    const client = await register({ isPublic: true });
    await started(client);
    const { user_code } = await started(client);
    await decideDevice(new Browser(issuer.origin), user, user_code);
    jest.spyOn(nest.get(Clock), 'now').mockReturnValue(new Date(Date.now() + 86_400_000));
    const result = await nest.get(PurgeService).purge();
    expect(result.deviceAuthorizations).toBeGreaterThanOrEqual(2);
    const left = (await nest.get<DataSource>(getDataSourceToken()).query(`SELECT COUNT(*) AS "n" FROM "device_authorizations" WHERE "client_id" = '${client.clientId}'`)) as { n: number | string }[];
    expect(Number(left[0].n)).toBe(0);
  });
});
