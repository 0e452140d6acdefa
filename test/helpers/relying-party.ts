/**
 * A browser across two sites, the relying party's and ours, for the tests that run a relying-party
 * library as its quick-start has it: one cookie jar per origin, redirects followed, our sign-in and
 * consent forms filled in, and our form_post page submitted as a browser runs its one script.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { PROJECT } from './cli.js';
import { stopServer } from './npm-start.js';
import { Browser, hiddenFields, isConsentPage, isLoginPage, type Page } from './browser.js';
import type { TestUser } from './test-app.js';

/** The script of our form_post page (src/auth/interaction/pages.ts): a page carrying it is submitted. */
const FORM_POST_SCRIPT = '<script>document.forms[0].submit();</script>';

/**
 * The parameters our form_post page (Form Post Response Mode §2) posts to `redirectUri`, after
 * checking it is one: a 200 HTML page, never cached, whose form posts to exactly that URI.
 */
export function formPostedTo(page: Page, redirectUri: string): Record<string, string> {
  expect({ status: page.status, location: page.location }).toEqual({ status: 200, location: undefined });
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.headers.get('cache-control')).toBe('no-store');
  expect(page.body).toContain(`<form method="post" action="${redirectUri}">`);
  expect(page.body).toContain(FORM_POST_SCRIPT);
  return hiddenFields(page.body, redirectUri);
}

export interface Visit {
  /** The URL of the last request. */
  url: URL;
  page: Page;
  /** Every URL requested on the way, in order. */
  hops: URL[];
}

export class TwoSiteBrowser {
  private readonly sites = new Map<string, Browser>();

  constructor(
    private readonly issuer: URL,
    private readonly user: TestUser,
  ) {}

  /** The cookie jar of `url`'s origin. */
  site(url: URL | string): Browser {
    const origin = new URL(url).origin;
    let browser = this.sites.get(origin);
    if (!browser) this.sites.set(origin, (browser = new Browser(origin)));
    return browser;
  }

  /**
   * Goes to `url` and on until a page that is neither a redirect, nor our sign-in or consent form
   * (filled in and sent), nor our form_post page (posted where it says): that page is the answer.
   */
  async visit(url: URL | string, options: { method?: 'GET' | 'POST'; fields?: Record<string, string> } = {}): Promise<Visit> {
    let current = new URL(url);
    const hops = [current];
    let page = options.method === 'POST' ? await this.site(current).post(current.href, options.fields ?? {}) : await this.site(current).get(current.href);
    for (let hop = 0; hop < 20; hop++) {
      const ours = current.origin === this.issuer.origin;
      let next: { url: URL; fields?: Record<string, string> } | undefined;
      if (page.location) next = { url: new URL(page.location, current) };
      else if (ours && isLoginPage(page)) next = { url: new URL('/login', this.issuer), fields: { ...hiddenFields(page.body, '/login'), username: this.user.username, password: this.user.password } };
      else if (ours && isConsentPage(page)) next = { url: new URL('/consent', this.issuer), fields: { ...hiddenFields(page.body, '/consent'), decision: 'allow' } };
      else if (ours && page.body.includes(FORM_POST_SCRIPT)) {
        const action = decodeEntities(/<form method="post" action="([^"]+)">/.exec(page.body)![1]);
        next = { url: new URL(action), fields: hiddenFields(page.body, action) };
      }
      if (!next) return { url: current, page, hops };
      current = next.url;
      hops.push(current);
      page = next.fields ? await this.site(current).post(current.href, next.fields) : await this.site(current).get(current.href);
    }
    throw new Error(`More than 20 hops from ${String(url)}: ${hops.join(' → ')}`);
  }
}

/**
 * Starts a relying-party application of test/fixtures/relying-parties in its own Node process (the
 * libraries are CommonJS requiring ES modules, which Jest's module loader cannot), on `port`, with
 * `env`; resolves once it listens (up to 10 s), with its output so far on failure.
 */
export async function startRelyingParty(script: string, port: number, env: Record<string, string>): Promise<{ app: ChildProcess; url: URL }> {
  const app = spawn(process.execPath, [new URL(`../fixtures/relying-parties/${script}`, import.meta.url).pathname], {
    cwd: PROJECT,
    env: { ...process.env, ...env, PORT: String(port), NODE_ENV: 'development' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  app.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  app.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  for (let i = 0; i < 200 && !output.includes('listening'); i++) {
    if (app.exitCode !== null) throw new Error(`${script} exited during start-up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!output.includes('listening')) {
    await stopServer(app);
    throw new Error(`${script} did not start:\n${output}`);
  }
  return { app, url: new URL(`http://127.0.0.1:${port}`) };
}

function decodeEntities(value: string): string {
  return value.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
}
