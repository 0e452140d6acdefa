/**
 * A minimal browser for e2e tests: a cookie jar, no automatic redirects (tests look at each
 * hop), and form handling that reads the page's hidden fields like a browser submitting it.
 */
export interface Page {
  status: number;
  headers: Headers;
  body: string;
  location?: string;
}

export class Browser {
  private readonly cookies = new Map<string, string>();

  /** `headers` go with every request: a device's User-Agent, an address in X-Forwarded-For. */
  constructor(
    private readonly baseUrl: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  async get(pathOrUrl: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.request('GET', pathOrUrl, undefined, headers);
  }

  /** Submits a form body as application/x-www-form-urlencoded. */
  async post(pathOrUrl: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Page> {
    return this.request('POST', pathOrUrl, new URLSearchParams(fields).toString(), { 'content-type': 'application/x-www-form-urlencoded', ...headers });
  }

  /** Posts a JSON body, as a page's script does with fetch(). */
  async postJson(pathOrUrl: string, body: unknown, headers: Record<string, string> = {}): Promise<Page> {
    return this.request('POST', pathOrUrl, JSON.stringify(body), { 'content-type': 'application/json', ...headers });
  }

  /** Submits the page's form whose action is `action`, with its hidden fields plus `fields` (and the clicked button). */
  async submit(page: Page, action: string, fields: Record<string, string> = {}): Promise<Page> {
    return this.post(action, { ...hiddenFields(page.body, action), ...fields });
  }

  hasCookies(): boolean {
    return this.cookies.size > 0;
  }

  clearCookies(): void {
    this.cookies.clear();
  }

  /** Another browser holding a copy of this one's cookies (an attacker who copied them), optionally talking to another instance. */
  copy(baseUrl = this.baseUrl): Browser {
    const copy = new Browser(baseUrl, this.headers);
    for (const [name, value] of this.cookies) copy.cookies.set(name, value);
    return copy;
  }

  private async request(method: string, pathOrUrl: string, body: string | undefined, headers: Record<string, string>): Promise<Page> {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : this.baseUrl + pathOrUrl;
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await fetch(url, { method, body, redirect: 'manual', headers: { ...this.headers, ...(cookie ? { cookie } : {}), ...headers } });
    for (const setCookie of response.headers.getSetCookie()) {
      const [pair] = setCookie.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      if (value === '' || /max-age=0/i.test(setCookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: response.status, headers: response.headers, body: await response.text(), location: response.headers.get('location') ?? undefined };
  }
}

/** The name of the sign-in session cookie (src/config/session.config.ts). */
export const SESSION_COOKIE = 'latchkey_session';

export function isLoginPage(page: Page): boolean {
  return page.status === 200 && page.body.includes('action="/login"');
}

export function isConsentPage(page: Page): boolean {
  return page.status === 200 && page.body.includes('action="/consent"');
}

/** The Set-Cookie line of the session cookie in a response. */
export function sessionCookie(page: Page): string | undefined {
  return page.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
}

/** The hidden inputs of the form posting to `action` on an HTML page. */
export function hiddenFields(html: string, action: string): Record<string, string> {
  const form = new RegExp(`<form[^>]*action="${action.replace(/[/]/g, '\\/')}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
  if (!form) throw new Error(`No form posting to ${action} on the page:\n${html}`);
  const fields: Record<string, string> = {};
  for (const input of form[1].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[input[1]] = decodeEntities(input[2]);
  }
  return fields;
}

/** Text as the page escaped it (Eta escapes & < > " '), read back. */
export function decodeEntities(value: string): string {
  return value.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
}
