import { obtainCode, tokenRequest } from './oauth-flow.js';
import type { RegisteredClient, TestApp, TestUser } from './test-app.js';

/** Tokens from the real authorization code flow (login, consent, /token). */
export interface IssuedTokens {
  accessToken: string;
  refreshToken?: string;
  scope: string;
}

/** Drives the authorization code flow for `user` through `client` and redeems the code at /token. */
export async function obtainTokens(app: TestApp, client: RegisteredClient, user: TestUser, scope: string): Promise<IssuedTokens> {
  const { code, pkce } = await obtainCode(app, client, user, { scope });
  const result = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: pkce.verifier });
  if (result.status !== 200 || typeof result.body.access_token !== 'string') {
    throw new Error(`Token request failed with ${result.status}: ${JSON.stringify(result.body)}`);
  }
  return {
    accessToken: result.body.access_token,
    refreshToken: typeof result.body.refresh_token === 'string' ? result.body.refresh_token : undefined,
    scope: String(result.body.scope),
  };
}

export async function obtainAccessToken(app: TestApp, client: RegisteredClient, user: TestUser, scope: string): Promise<string> {
  return (await obtainTokens(app, client, user, scope)).accessToken;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** The body as received ('' when there is none). */
  text: string;
  /** The body parsed as JSON; undefined when it is empty or not JSON. */
  json: unknown;
}

export interface ApiRequestOptions {
  /** Sent as JSON (application/json unless contentType says otherwise). */
  json?: unknown;
  /** Sent as is, with contentType (if any). */
  raw?: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
  /** The Authorization header to send instead of the client's bearer token; null sends none. */
  authorization?: string | null;
}

/** Every 5xx any ApiClient received since the last takeServerErrors(): the API must never answer one. */
const serverErrors: string[] = [];

/** Returns and forgets the 5xx responses seen so far (call it in afterEach and expect []). */
export function takeServerErrors(): string[] {
  return serverErrors.splice(0, serverErrors.length);
}

/** Calls the REST API over real HTTP with a bearer token. */
export class ApiClient {
  constructor(
    private readonly app: TestApp,
    readonly token?: string,
  ) {}

  /**
   * `path` is an API path (`/api/v1/notes`). Absolute URLs the API hands out (Location, Link) are
   * built on ISSUER, not on the test server's port: pass them through pathOf() after checking their origin.
   */
  async request(method: string, path: string, options: ApiRequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = {};
    const authorization = options.authorization === undefined ? (this.token === undefined ? undefined : `Bearer ${this.token}`) : options.authorization;
    if (authorization !== undefined && authorization !== null) headers.authorization = authorization;
    let body: string | Uint8Array | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = options.contentType ?? 'application/json';
    } else if (options.raw !== undefined) {
      body = options.raw;
      if (options.contentType !== undefined) headers['content-type'] = options.contentType;
    }
    if (!path.startsWith('/')) throw new Error(`Expected a path, got ${path}: use pathOf() on absolute URLs`);
    const url = this.app.url(path);
    const response = await fetch(url, { method, headers: { ...headers, ...options.headers }, body: body instanceof Uint8Array ? new Uint8Array(body) : body, redirect: 'manual' });
    const text = await response.text();
    if (response.status >= 500) serverErrors.push(`${method} ${path} → ${response.status} ${text}`);
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  }

  get(path: string, options?: ApiRequestOptions): Promise<ApiResponse> {
    return this.request('GET', path, options);
  }

  head(path: string, options?: ApiRequestOptions): Promise<ApiResponse> {
    return this.request('HEAD', path, options);
  }

  options(path: string, options?: ApiRequestOptions): Promise<ApiResponse> {
    return this.request('OPTIONS', path, options);
  }

  post(path: string, json: unknown, options?: ApiRequestOptions): Promise<ApiResponse> {
    return this.request('POST', path, { json, ...options });
  }

  put(path: string, json: unknown, options?: ApiRequestOptions): Promise<ApiResponse> {
    return this.request('PUT', path, { json, ...options });
  }

  patch(path: string, json: unknown, options?: ApiRequestOptions): Promise<ApiResponse> {
    return this.request('PATCH', path, { json, contentType: 'application/merge-patch+json', ...options });
  }

  delete(path: string, options?: ApiRequestOptions): Promise<ApiResponse> {
    return this.request('DELETE', path, options);
  }
}

/** Path and query of an absolute URL, to request it on the test server. */
export function pathOf(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

/** The target of a Link header's rel="next" (RFC 8288), if any. */
export function nextLink(headers: Headers): string | undefined {
  const link = headers.get('link');
  if (!link) return undefined;
  for (const part of link.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match && /(^|;)\s*rel="?([^";]*\s)?next(\s[^";]*)?"?\s*(;|$)/i.test(match[2])) return match[1];
  }
  return undefined;
}
