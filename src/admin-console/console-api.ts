import { ADMIN_API } from '../admin/admin-reply.js';
import { AdminApiRefusal, SignInRequired } from './console-errors.js';
import type { InProcessHttp } from './in-process-http.js';

/** An answer of the admin API: its status and its JSON body ({} when it has none). */
export interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
}

export type Query = Record<string, string | undefined>;

/**
 * The admin API as one signed-in administrator calls it from the console: every call a real HTTP
 * request with their access token (in-process, InProcessHttp), so AdminAccess decides each one as it
 * decides any caller's, and the audit trail records them with their address.
 */
export class ConsoleApi {
  constructor(
    private readonly http: InProcessHttp,
    private readonly accessToken: string,
    private readonly remoteAddress: string,
    /** Where to come back to when the token turns out dead mid-request (revoked meanwhile). */
    private readonly returnTo: string,
  ) {}

  /** GET; a refusal (4xx) throws AdminApiRefusal with the API's own description. */
  async get<T = Record<string, unknown>>(path: string, query: Query = {}): Promise<T> {
    return (await this.expect('GET', withQuery(path, query))) as T;
  }

  /** POST, PUT, PATCH or DELETE with a JSON body (or none); a refusal throws AdminApiRefusal. */
  async send<T = Record<string, unknown>>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
    return (await this.expect(method, path, body)) as T;
  }

  /** The answer as it is, for a caller that shows a refusal in place (a dashboard panel the role may not read). */
  async answer(method: string, path: string, query: Query = {}): Promise<ApiAnswer> {
    const response = await this.http.send({
      method,
      path: `/${ADMIN_API}${withQuery(path, query)}`,
      headers: { authorization: `Bearer ${this.accessToken}`, accept: 'application/json' },
      remoteAddress: this.remoteAddress,
    });
    return { status: response.status, body: parse(response.body) };
  }

  private async expect(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const response = await this.http.send({
      method,
      path: `/${ADMIN_API}${path}`,
      headers: { authorization: `Bearer ${this.accessToken}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      remoteAddress: this.remoteAddress,
    });
    const answer = parse(response.body);
    // The token died between the check of this visit and this call (revoked on another instance).
    if (response.status === 401) throw new SignInRequired(this.returnTo);
    if (response.status >= 400) {
      const description = typeof answer.error_description === 'string' ? answer.error_description : `The admin API answered ${response.status}`;
      throw new AdminApiRefusal(response.status, typeof answer.error === 'string' ? answer.error : 'error', description);
    }
    return answer;
  }
}

/** `path?query`, leaving out the parameters that are not given (a blank filter is no filter). */
export function withQuery(path: string, query: Query): string {
  const given = Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '');
  return given.length === 0 ? path : `${path}?${new URLSearchParams(given).toString()}`;
}

function parse(text: string): Record<string, unknown> {
  if (text === '') return {};
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
