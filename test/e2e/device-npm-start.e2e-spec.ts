/**
 * The walk-through of docs/guides/devices.md against the server started as `npm start`
 * starts it (its environment, Node options and dist/src/main.js, in a child process), with the
 * client made by the admin CLI and the default interval of 5 seconds: the device's requests as
 * curl sends them (form posts), the person's as a browser's; then issue 35's real clients, whole
 * flows by oauth4webapi's device functions and by openid-client's device authorization grant, each
 * polling at the interval while the person approves at the verification page.
 */
import type { ChildProcess } from 'node:child_process';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { Browser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { decideDevice, DEVICE_CODE_GRANT, pollToken, requestDeviceAuthorization } from '../helpers/device.js';
import { startAsNpmStart, stopServer } from '../helpers/npm-start.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { expectTokenError } from '../helpers/token-assertions.js';
import { within } from '../helpers/within.js';

const USER = { username: 'terminal-user', password: 'correct horse battery staple' };

/** oauth4webapi refuses http:// unless told; the server listens on loopback. */
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

/** Each flow waits the 5 s interval once or twice, on a machine that may be busy. */
const FLOW_TIMEOUT = 60_000;

const sleep = (seconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

describe('Sign in from a terminal (RFC 8628) against `npm start`', () => {
  let server: ChildProcess;
  let issuer: URL;
  let clientId: string;
  let userId: string;

  /** The ID token's claims of a sign-in by password at the verification page (OIDC Core §2). */
  const passwordSignIn = (): Record<string, unknown> => ({ iss: issuer.origin, aud: clientId, sub: userId, acr: 'urn:latchkey:acr:pwd', amr: ['pwd'], auth_time: expect.any(Number), sid: expect.any(String) });
  const readNotes = (token: string): Promise<Response> => fetch(new URL('/api/v1/notes', issuer), { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    ({ server, issuer } = await startAsNpmStart());
    const user = await runCli(['users:create', '--username', USER.username, '--password', USER.password]);
    expect(user.code).toBe(0);
    userId = (JSON.parse(user.stdout) as { id: string }).id;
    const created = await runCli(['clients:create', '--name', 'My CLI', '--public', '--grant-type', DEVICE_CODE_GRANT, '--grant-type', 'refresh_token', '--scope', 'notes:read']);
    expect(created.code).toBe(0);
    clientId = (JSON.parse(created.stdout) as { client_id: string }).client_id;
  });
  afterAll(async () => {
    await stopServer(server);
    await dropTestDatabase();
  });

  it('device_authorization, the person approves at verification_uri, the poll after the interval gets the tokens', async () => {
    const client = { clientId, redirectUri: '' };
    const started = await requestDeviceAuthorization(issuer, client, { scope: 'openid notes:read' });
    expect(started.status).toBe(200);
    const { device_code, user_code, verification_uri, interval } = started.body as { device_code: string; user_code: string; verification_uri: string; interval: number };
    expect(verification_uri).toBe(`${issuer.origin}/device`);
    expect(interval).toBe(5);
    expectTokenError(await pollToken(issuer, client, device_code), 400, 'authorization_pending');

    await decideDevice(new Browser(issuer.origin), USER, user_code);
    await new Promise((resolve) => setTimeout(resolve, interval * 1000));
    const tokens = await pollToken(issuer, client, device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'bearer', scope: 'notes:read openid', refresh_token: expect.stringMatching(/^lk_rt_/) });
    expect(decodeJwt(tokens.body.id_token as string)).toMatchObject({ iss: issuer.origin, aud: clientId });
    const notes = await fetch(new URL('/api/v1/notes', issuer), { headers: { authorization: `Bearer ${tokens.body.access_token as string}` } });
    expect(notes.status).toBe(200);
  });

  it('oauth4webapi\'s device functions: the device polls every interval, hears authorization_pending until the person approves, then gets the tokens and an ID token', async () => {
    const client: oauth.Client = { client_id: clientId };
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...INSECURE }));
    const device = await oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, oauth.None(), { scope: 'openid notes:read' }, INSECURE));
    expect(device.interval).toBe(5);
    const poll = async () => oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, oauth.None(), device.device_code, INSECURE));

    // The device's loop as RFC 8628 §3.5 asks: poll, and on authorization_pending wait the interval (5 s more on slow_down).
    const heard: string[] = [];
    const polling = (async () => {
      let interval = device.interval!;
      for (;;) {
        try {
          return await poll();
        } catch (error) {
          if (!(error instanceof oauth.ResponseBodyError) || (error.error !== 'authorization_pending' && error.error !== 'slow_down')) throw error;
          heard.push(error.error);
          if (error.error === 'slow_down') interval += 5;
          await sleep(interval);
        }
      }
    })();
    // The person approves while the device waits after its first poll.
    expect(await within(5_000, () => Promise.resolve(heard.length > 0))).toBe(true);
    await decideDevice(new Browser(issuer.origin), USER, device.user_code);
    const tokens = await polling;

    // Once, unless the approval took longer than an interval; never slow_down.
    expect(new Set(heard)).toEqual(new Set(['authorization_pending']));
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'notes:read openid', refresh_token: expect.stringMatching(/^lk_rt_/) });
    expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject(passwordSignIn());
    expect((await readNotes(tokens.access_token)).status).toBe(200);
  }, FLOW_TIMEOUT);

  it('openid-client\'s initiateDeviceAuthorization and pollDeviceAuthorizationGrant: the person approves after the first poll, the library polls again after the interval and gets the tokens and an ID token', async () => {
    const config = await oidc.discovery(issuer, clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    expect(config.serverMetadata().device_authorization_endpoint).toBe(`${issuer.origin}/device_authorization`);
    // What each of the library's polls heard, read from a copy of the answer.
    const polls: string[] = [];
    config[oidc.customFetch] = async (url, options) => {
      const response = await fetch(url, options as RequestInit);
      if (new URL(url).pathname === '/token') polls.push(response.ok ? 'tokens' : ((await response.clone().json()) as { error: string }).error);
      return response;
    };
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid notes:read' });
    expect(device.interval).toBe(5);
    const polling = oidc.pollDeviceAuthorizationGrant(config, device);
    // The library waits the interval before its first poll; the person approves once it has heard authorization_pending.
    expect(await within(15_000, () => Promise.resolve(polls.length > 0))).toBe(true);
    await decideDevice(new Browser(issuer.origin), USER, device.user_code);
    const tokens = await polling;

    expect(polls.at(-1)).toBe('tokens');
    expect(new Set(polls.slice(0, -1))).toEqual(new Set(['authorization_pending']));
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'notes:read openid', refresh_token: expect.stringMatching(/^lk_rt_/) });
    expect(tokens.claims()).toMatchObject(passwordSignIn());
    expect((await readNotes(tokens.access_token)).status).toBe(200);
  }, FLOW_TIMEOUT);
});
