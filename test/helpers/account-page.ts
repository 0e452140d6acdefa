import type { DataSource } from 'typeorm';
import { ClientsService } from '../../src/clients/clients.service.js';
import { Browser, hiddenFields, type Page } from './browser.js';
import { authorizeAsUser, authorizeUrl, basicAuth, newPkce, redirectParams } from './oauth-flow.js';
import type { PasskeyTestApp } from './passkeys.js';

/** Helpers of the account page's tests (issue 48): people, their browsers, an application with tokens, and what the tables hold. */

export type Person = { id: string; username: string; password: string };

/** The CSRF token the page's form posting to `action` carries. */
export function csrfOn(page: Page, action: string): string {
  const token = hiddenFields(page.body, action).csrf_token;
  if (!token) throw new Error(`no CSRF token in the form posting to ${action}`);
  return token;
}

/** Whether this browser is signed in: /account shows the page rather than sending it to sign in. */
export async function signedIn(browser: Browser): Promise<boolean> {
  const page = await browser.get('/account');
  return page.status === 200 && page.body.includes('You are signed in as');
}

/** The public ids of the sessions the page lists with an End button (the other browsers'). */
export function otherSessionIds(page: Page): string[] {
  return [...page.body.matchAll(/<input type="hidden" name="session_id" value="([^"]+)">/g)].map((match) => match[1]);
}

/** A password sign-in through the form: the answer to the POST. */
export async function signInWith(browser: Browser, username: string, password: string): Promise<Page> {
  const login = await browser.get('/login');
  return browser.submit(login, '/login', { username, password });
}

/** An application the person allowed (`notes:read`), with the tokens it got: signed in through `browser`'s session. */
export async function applicationWithTokens(app: PasskeyTestApp, browser: Browser, person: Person, name: string): Promise<{ clientId: string; access: string; refresh: string; secret: string }> {
  const { client, secret } = await app.nest.get(ClientsService).create({ name, redirectUris: ['https://app.example/cb'], scope: 'openid notes:read' });
  const pkce = newPkce();
  const page = await authorizeAsUser(browser, person, authorizeUrl({ clientId: client.id, redirectUri: 'https://app.example/cb' }, { scope: 'openid notes:read', nonce: 'n', code_challenge: pkce.challenge, code_challenge_method: 'S256' }));
  const code = redirectParams(page).get('code');
  if (!code) throw new Error(`no code: ${page.status} ${page.location}`);
  const tokens = await postForm(app, { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: 'https://app.example/cb' }, basicAuth(client.id, secret!));
  return { clientId: client.id, access: tokens.access_token as string, refresh: tokens.refresh_token as string, secret: secret! };
}

/** The application's client authentication at /token (HTTP Basic). */
export function basicAuthOf(application: { clientId: string; secret: string }): string {
  return basicAuth(application.clientId, application.secret);
}

export async function postForm(app: PasskeyTestApp, form: Record<string, string>, authorization: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${app.baseUrl}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization }, body: new URLSearchParams(form).toString() });
  return (await response.json()) as Record<string, unknown>;
}

/** The data API's answer to the access token: 200 while it works, 401 once revoked. */
export async function apiStatus(app: PasskeyTestApp, token: string): Promise<number> {
  const response = await fetch(`${app.baseUrl}/api/v1/notes`, { headers: { authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  return response.status;
}

/** What a refused form must leave as it was: the person's row, their live sessions, consents and passkeys, and the audit trail's length. */
export async function tablesOf(dataSource: DataSource, userId: string): Promise<unknown> {
  const rows = (sql: string) => dataSource.query(sql.replace('$user', `'${userId}'`));
  return {
    user: await rows(`SELECT "name", "email", "email_verified", "password_hash" FROM "users" WHERE "id" = $user`),
    liveSessions: await rows(`SELECT "public_id" FROM "sessions" WHERE "user_id" = $user AND "ended_at" IS NULL ORDER BY "public_id"`),
    consents: await rows(`SELECT "client_id" FROM "consents" WHERE "user_id" = $user ORDER BY "client_id"`),
    passkeys: await rows(`SELECT "id" FROM "passkeys" WHERE "user_id" = $user ORDER BY "id"`),
    auditEvents: ((await rows(`SELECT COUNT(*) AS "n" FROM "audit_events"`)) as { n: string | number }[]).map((row) => Number(row.n)),
  };
}

/** The audit events about the person, oldest first: action, actor and address. */
export async function eventsAbout(dataSource: DataSource, userId: string): Promise<{ action: string; actor: string; ip: string | null }[]> {
  return dataSource.query(`SELECT "action", "actor", "ip" FROM "audit_events" WHERE "subject" = 'user:${userId}' ORDER BY "id"`);
}

export { Browser };
