/**
 * A browser for sign-ins that cross sites: one cookie jar per origin (Latchkey's, each upstream
 * provider's, a relying party's), each redirect followed by hand so a test can look at every hop.
 */
import { Browser, type Page } from '../../helpers/browser.js';

export interface Hop {
  url: URL;
  page: Page;
}

export class FederatedBrowser {
  private readonly sites = new Map<string, Browser>();
  /** Every request made, in order. */
  readonly hops: Hop[] = [];

  /** The cookie jar of `url`'s origin. */
  site(url: URL | string): Browser {
    const origin = new URL(url).origin;
    let browser = this.sites.get(origin);
    if (!browser) this.sites.set(origin, (browser = new Browser(origin)));
    return browser;
  }

  async get(url: URL | string): Promise<Hop> {
    const target = new URL(url);
    const hop = { url: target, page: await this.site(target).get(target.href) };
    this.hops.push(hop);
    return hop;
  }

  async post(url: URL | string, fields: Record<string, string>): Promise<Hop> {
    const target = new URL(url);
    const hop = { url: target, page: await this.site(target).post(target.href, fields) };
    this.hops.push(hop);
    return hop;
  }

  /** Follows redirects from `hop` until a page, or until the next hop would leave for `stopAt`'s origin (a relying party not running). */
  async follow(hop: Hop, stopAt?: string): Promise<Hop> {
    let current = hop;
    for (let i = 0; i < 20 && current.page.location; i++) {
      const next = new URL(current.page.location, current.url);
      if (stopAt !== undefined && next.origin === new URL(stopAt).origin) return { url: next, page: current.page };
      current = await this.get(next);
    }
    return current;
  }

  /** At the upstream's sign-in form (test/fixtures/upstream/oidc-provider-idp.mjs): signs in as `login`, claiming `amr`, and follows on. */
  async signInUpstream(form: Hop, login: string, options: { amr?: string; stopAt?: string } = {}): Promise<Hop> {
    const action = /<form method="post" action="([^"]+)">/.exec(form.page.body);
    if (!action) throw new Error(`not the upstream's sign-in form (${form.url.href}):\n${form.page.body.slice(0, 500)}`);
    return this.follow(await this.post(new URL(action[1], form.url), { login, amr: options.amr ?? 'pwd' }), options.stopAt);
  }

  /** At the upstream's sign-out confirmation (node-oidc-provider's end_session page): confirms, and follows on. */
  async confirmUpstreamLogout(page: Hop, options: { stopAt?: string } = {}): Promise<Hop> {
    const form = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>|<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"[^>]*>([\s\S]*?)<\/form>/.exec(page.page.body);
    if (!form) throw new Error(`not the upstream's sign-out page (${page.url.href}):\n${page.page.body.slice(0, 800)}`);
    const fields: Record<string, string> = { logout: 'yes' };
    for (const input of (form[2] ?? form[4]).matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields[input[1]] = input[2];
    return this.follow(await this.post(new URL(form[1] ?? form[3], page.url), fields), options.stopAt);
  }
}
