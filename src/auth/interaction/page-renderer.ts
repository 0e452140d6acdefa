import { Injectable } from '@nestjs/common';
import { Eta } from 'eta';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../common/project-root.js';

export type PageName = 'form-post' | 'login' | 'consent' | 'device' | 'device-done' | 'error' | 'home' | 'account' | 'logout' | 'signed-out' | 'second-factor' | 'enrol-one-time-codes' | 'recovery-codes' | 'passkeys' | 'no-access';

export interface Page {
  status: number;
  html: string;
  /** Origins the page's form may eventually navigate to (CSP form-action follows redirects). */
  formTargets: string[];
  headers?: Record<string, string>;
  /** The page loads our own scripts (/assets/…): only the passkey pages, which WebAuthn needs JavaScript for. */
  scripts?: boolean;
  /** CSP hash sources ('sha256-…') of the page's inline scripts: only the form_post page's one submit. */
  inlineScripts?: string[];
}

/**
 * Renders the server-side pages with Eta (auto-escaping on; templates compiled once and cached).
 * Pages work without JavaScript; only the passkey parts need it (Page.scripts).
 */
@Injectable()
export class PageRenderer {
  private readonly eta = new Eta({ views: join(PROJECT_ROOT, 'views'), cache: true, autoEscape: true, autoTrim: false });

  render(name: PageName, data: Record<string, unknown>, options: { status?: number; formTargets?: string[]; headers?: Record<string, string>; scripts?: boolean; inlineScripts?: string[] } = {}): Page {
    const html = this.eta.render(`./${name}`, data);
    return { status: options.status ?? 200, html, formTargets: options.formTargets ?? [], headers: options.headers, scripts: options.scripts, inlineScripts: options.inlineScripts };
  }
}
