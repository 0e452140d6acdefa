import { createHash, randomBytes } from 'node:crypto';
import { Browser, type Page } from './browser.js';
import type { RegisteredClient, RegisteredClientWithMethod, TestApp, TestUser } from './test-app.js';

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function newPkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizeUrl(client: RegisteredClient, params: Record<string, string | undefined> = {}): string {
  const query = new URLSearchParams();
  const all: Record<string, string | undefined> = { response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUri, ...params };
  for (const [name, value] of Object.entries(all)) if (value !== undefined) query.set(name, value);
  return `/authorize?${query}`;
}

/** Parameters of a redirect Location (query of the client's redirect URI). */
export function redirectParams(page: Page): URLSearchParams {
  if (!page.location) throw new Error(`Expected a redirect, got ${page.status}:\n${page.body}`);
  return new URL(page.location).searchParams;
}

/**
 * Drives a person through GET /authorize → login → consent → Allow and returns the final redirect.
 * Logs in only when the login page appears; allows only when the consent page appears.
 */
export async function authorizeAsUser(browser: Browser, user: TestUser, url: string, decision: 'allow' | 'deny' = 'allow'): Promise<Page> {
  let page = await browser.get(url);
  if (page.status === 200 && page.body.includes('action="/login"')) {
    const afterLogin = await browser.submit(page, '/login', { username: user.username, password: user.password });
    if (afterLogin.status !== 303) throw new Error(`Login failed with ${afterLogin.status}:\n${afterLogin.body}`);
    page = await browser.get(afterLogin.location!);
  }
  if (page.status === 200 && page.body.includes('action="/consent"')) {
    page = await browser.submit(page, '/consent', { decision });
  }
  return page;
}

/**
 * `user` signs in and consents in a browser (a new one unless given) for an authorization URL a
 * client library built; the redirect back to the client.
 */
export async function signIn(user: TestUser, url: URL, browser = new Browser(url.origin)): Promise<URL> {
  const page = await authorizeAsUser(browser, user, url.href);
  if (!page.location) throw new Error(`Expected a redirect, got ${page.status}:\n${page.body}`);
  return new URL(page.location);
}

export function basicAuth(clientId: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

/** A client_credentials request to the server at `baseUrl` (any instance); resolves to the status. */
export async function clientCredentialsStatus(baseUrl: string, client: RegisteredClient): Promise<number> {
  const response = await fetch(`${baseUrl}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.clientId, client.clientSecret!) },
    body: 'grant_type=client_credentials',
  });
  await response.arrayBuffer();
  return response.status;
}

export interface TokenResult {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** POST /token with the client's registered authentication: Basic by default, the secret in the form for client_secret_post. */
export function tokenRequest(app: TestApp, client: RegisteredClientWithMethod, params: Record<string, string>, headers: Record<string, string> = {}): Promise<TokenResult> {
  if (client.clientSecret && client.tokenEndpointAuthMethod === 'client_secret_post') {
    return postToken(app, { ...params, client_id: client.clientId, client_secret: client.clientSecret }, headers);
  }
  const auth: Record<string, string> = client.clientSecret ? { authorization: basicAuth(client.clientId, client.clientSecret) } : {};
  return postToken(app, params, { ...auth, ...headers });
}

/** POST /token with exactly the given form fields and headers (no client authentication added). */
export async function postToken(app: TestApp, form: Record<string, string>, headers: Record<string, string> = {}): Promise<TokenResult> {
  const response = await fetch(app.url('/token'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** A complete flow up to a code, for tests that start at the token endpoint. */
export async function obtainCode(app: TestApp, client: RegisteredClient, user: TestUser, params: Record<string, string> = {}): Promise<{ code: string; pkce: Pkce }> {
  const pkce = newPkce();
  const page = await authorizeAsUser(new Browser(app.baseUrl), user, authorizeUrl(client, { scope: 'notes:read', state: 's', code_challenge: pkce.challenge, code_challenge_method: 'S256', ...params }));
  const code = redirectParams(page).get('code');
  if (!code) throw new Error(`No code in ${page.location}`);
  return { code, pkce };
}

/** POST /introspect (RFC 7662) as `resourceServer`; expects 200 and returns the JSON answer. */
export async function introspect(app: TestApp, resourceServer: RegisteredClient, token: string): Promise<Record<string, unknown>> {
  const response = await fetch(app.url('/introspect'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(resourceServer.clientId, resourceServer.clientSecret!) },
    body: new URLSearchParams({ token }).toString(),
  });
  if (response.status !== 200) throw new Error(`/introspect answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}
