import { Browser, hiddenFields, isConsentPage, type Page } from './browser.js';
import { redirectParams, tokenRequest, type Pkce } from './oauth-flow.js';
import type { RegisteredClient, TestApp, TestUser } from './test-app.js';
import { keyShownOn, recoveryCodesShownOn, totpCode } from './totp.js';

/** Signs `user` in with the password on /login (continuing to `returnTo`); the answer to the POST. */
export async function signInWithPassword(browser: Browser, user: TestUser, returnTo = '/'): Promise<Page> {
  const login = await browser.get('/login');
  return browser.post('/login', { ...hiddenFields(login.body, '/login'), username: user.username, password: user.password, return_to: returnTo });
}

/** Enrols one-time codes from the enrolment page `enrol` at time `at`; the key shown and the recovery codes. */
export async function enrolFrom(browser: Browser, enrol: Page, at: number): Promise<{ key: string; recoveryCodes: string[]; done: Page }> {
  const key = keyShownOn(enrol);
  const done = await browser.submit(enrol, '/account/one-time-codes', { code: totpCode(key, at) });
  if (done.status !== 200) throw new Error(`Enrolment answered ${done.status}:\n${done.body}`);
  return { key, recoveryCodes: recoveryCodesShownOn(done), done };
}

/** From a page of the authorization flow: allow on the consent page if shown, then redeem the code; the token response body. */
export async function redeemFrom(app: TestApp, browser: Browser, page: Page, client: RegisteredClient, pkce: Pkce): Promise<Record<string, unknown>> {
  let next = page;
  if (isConsentPage(next)) next = await browser.submit(next, '/consent', { decision: 'allow' });
  const code = redirectParams(next).get('code');
  if (!code) throw new Error(`No code: ${next.status} ${next.location}\n${next.body}`);
  const tokens = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
  if (tokens.status !== 200) throw new Error(`Token request answered ${tokens.status}: ${JSON.stringify(tokens.body)}`);
  return tokens.body;
}
