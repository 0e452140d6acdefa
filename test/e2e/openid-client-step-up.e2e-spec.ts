/**
 * Step-up through a stock relying-party library (openid-client v6), as issue 33 asks: the client
 * asks for a second-factor acr with a session that has only a password; the person is asked only
 * for the code (computed here by an independent RFC 6238 implementation from the key shown at
 * enrolment); the new ID token carries the higher acr, its amr and a new auth_time.
 */
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import * as oidc from 'openid-client';
import { ClientsService } from '../../src/clients/clients.service.js';
import { Clock } from '../../src/common/clock.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser, isConsentPage, type Page } from '../helpers/browser.js';
import { enrolFrom, signInWithPassword } from '../helpers/second-factor.js';
import type { TestUser } from '../helpers/test-app.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { totpCode } from '../helpers/totp.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const MFA = 'urn:latchkey:acr:mfa';

describe('step-up through openid-client', () => {
  let nest: NestFastifyApplication;
  let issuer: URL;
  let config: oidc.Configuration;
  let user: TestUser;
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;

  beforeAll(async () => {
    ({ nest, issuer } = await startAtIssuer());
    jest.spyOn(nest.get(Clock), 'now').mockImplementation(() => new Date(now()));
    user = { username: `carol_${Date.now().toString(36)}`, password: 'correct horse battery staple' };
    await nest.get(UsersService).create(user.username, user.password);
    const { client, secret } = await nest.get(ClientsService).create({ name: 'openid-client', redirectUris: [REDIRECT_URI], scope: 'notes:read' });
    config = await oidc.discovery(issuer, client.id, undefined, oidc.ClientSecretBasic(secret!), { execute: [oidc.allowInsecureRequests] });
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await nest?.close();
    await dropTestDatabase();
  });

  async function redeem(page: Page, browser: Browser, verifier: string, nonce: string, state: string) {
    const answer = isConsentPage(page) ? await browser.submit(page, '/consent', { decision: 'allow' }) : page;
    if (!answer.location) throw new Error(`Expected a redirect to the client, got ${answer.status}:\n${answer.body}`);
    return oidc.authorizationCodeGrant(config, new URL(answer.location), { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true });
  }

  function request(params: Record<string, string> = {}) {
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const state = oidc.randomState();
    return { verifier, nonce, state, url: async () => oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid notes:read', nonce, state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...params }) };
  }

  it('the library asks for acr mfa; a password-only session is asked only for the code; the new ID token says mfa with a new auth_time, in the same session (sid)', async () => {
    expect(config.serverMetadata().acr_values_supported).toContain(MFA);

    // A session with the password only, and an ID token that says so.
    const browser = new Browser(issuer.origin);
    await signInWithPassword(browser, user);
    const first = request();
    const firstTokens = await redeem(await browser.get((await first.url()).href), browser, first.verifier, first.nonce, first.state);
    expect(firstTokens.claims()).toMatchObject({ acr: 'urn:latchkey:acr:pwd', amr: ['pwd'] });

    // The person enrols one-time codes on another device's browser.
    const phone = new Browser(issuer.origin);
    await signInWithPassword(phone, user);
    const { key } = await enrolFrom(phone, await phone.get('/account/one-time-codes'), now());
    offsetMs += 30_000;

    const stepUp = request({ acr_values: MFA });
    const asked = await browser.get((await stepUp.url()).href);
    expect(asked.location).toBe('/login/code');
    const codePage = await browser.get('/login/code');
    expect(codePage.body).not.toContain('type="password"');
    const back = await browser.submit(codePage, '/login/code', { code: totpCode(key, now()) });
    const tokens = await redeem(await browser.get(back.location!), browser, stepUp.verifier, stepUp.nonce, stepUp.state);
    const claims = tokens.claims()!;
    expect(claims.acr).toBe(MFA);
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(claims.auth_time).toBeGreaterThan(firstTokens.claims()!.auth_time!);
    // The same sign-in session, raised: its sid is unchanged, so the client signed in through it is
    // not signed out (no back-channel logout for a step-up), and its first ID token is still valid for logout.
    expect(claims.sid).toBe(firstTokens.claims()!.sid);
  });
});
