/**
 * The device authorization grant (RFC 8628) from both ends, for the e2e tests: the device's
 * requests (POST /device_authorization, polls of /token) and the person at the verification page
 * in a cookie-jar browser (sign in, type or confirm the code, Allow or Deny), by form posts as a
 * browser without JavaScript makes them.
 */
import { Browser, hiddenFields, isLoginPage, type Page } from './browser.js';
import { basicAuth } from './oauth-flow.js';
import type { RegisteredClient, TestUser } from './test-app.js';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** The client's authentication as the tests register it: Basic with a secret, else client_id in the form (a public client). */
function authenticated(client: RegisteredClient, form: Record<string, string>): { headers: Record<string, string>; form: Record<string, string> } {
  if (client.clientSecret) return { headers: { authorization: basicAuth(client.clientId, client.clientSecret) }, form };
  return { headers: {}, form: { ...form, client_id: client.clientId } };
}

async function post(baseUrl: string | URL, path: string, form: Record<string, string>, headers: Record<string, string>): Promise<Reply> {
  const response = await fetch(new URL(path, baseUrl), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form).toString() });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** POST /device_authorization (RFC 8628 §3.1) as `client`. */
export function requestDeviceAuthorization(baseUrl: string | URL, client: RegisteredClient, params: Record<string, string> = {}): Promise<Reply> {
  const request = authenticated(client, params);
  return post(baseUrl, '/device_authorization', request.form, request.headers);
}

/** One poll of the token endpoint (RFC 8628 §3.4) as `client`. */
export function pollToken(baseUrl: string | URL, client: RegisteredClient, deviceCode: string, headers: Record<string, string> = {}): Promise<Reply> {
  const request = authenticated(client, { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode });
  return post(baseUrl, '/token', request.form, { ...request.headers, ...headers });
}

/** Signs `user` in on the sign-in page that `page` is, continuing where it was going; the page that follows. */
export async function signInFrom(browser: Browser, page: Page, user: TestUser): Promise<Page> {
  const afterLogin = await browser.submit(page, '/login', { username: user.username, password: user.password });
  if (afterLogin.status !== 303) throw new Error(`Sign-in answered ${afterLogin.status}:\n${afterLogin.body}`);
  return browser.get(afterLogin.location!);
}

/** The person at `path` (the verification URI, or the complete one): signs in if asked; the page with the code field. */
export async function openVerificationPage(browser: Browser, user: TestUser, path = '/device'): Promise<Page> {
  const page = await browser.get(path);
  return isLoginPage(page) ? signInFrom(browser, page, user) : page;
}

/** Types `userCode` into the code field of `page`, or confirms the value it holds when none is given,; the consent page, or what came instead. */
export function submitUserCode(browser: Browser, page: Page, userCode?: string): Promise<Page> {
  return browser.submit(page, '/device', { user_code: userCode ?? userCodeField(page) ?? '' });
}

/** The person approves (or denies) the device that shows `userCode`: sign in, type the code, answer the consent page. The final page. */
export async function decideDevice(browser: Browser, user: TestUser, userCode: string, decision: 'allow' | 'deny' = 'allow'): Promise<Page> {
  const entry = await openVerificationPage(browser, user);
  const consent = await submitUserCode(browser, entry, userCode);
  if (!isDeviceConsentPage(consent)) throw new Error(`Expected the consent page, got ${consent.status}:\n${consent.body}`);
  return browser.submit(consent, '/device/decision', { decision });
}

export function isDeviceConsentPage(page: Page): boolean {
  return page.status === 200 && page.body.includes('action="/device/decision"');
}

/** The value the code field of `page` holds (pre-filled from verification_uri_complete). */
export function userCodeField(page: Page): string | undefined {
  return /<input id="user_code" name="user_code"[^>]*value="([^"]*)"/.exec(page.body)?.[1];
}

/** The CSRF token of the sign-out form on the account page (the person signs out). */
export async function signOut(browser: Browser): Promise<void> {
  const home = await browser.get('/account');
  const done = await browser.post('/logout', { csrf_token: hiddenFields(home.body, '/logout').csrf_token });
  if (done.status !== 303) throw new Error(`Sign-out answered ${done.status}`);
}
