/**
 * What the admin console's browser specs (test/browser/admin-console*.e2e-spec.ts) share: the app
 * and Chromium started side by side and stopped together, windows on it, signing in to the console
 * in one, and the small steps every console page is driven by (a heading, a screenshot, a click
 * that leads to a page, Tab until an element has the focus).
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Browser as Chromium, BrowserContext, Page as PlaywrightPage } from 'playwright-core';
import { startConsoleApp, stopConsoleApp, type ConsolePerson } from '../../helpers/admin-console.js';
import { MovableClock } from '../../helpers/movable-clock.js';
import { totpCode } from '../../helpers/totp.js';
import { launchChromium } from './chromium.js';
import { openWindowAt, type Watcher } from './page-checks.js';

/** The first stop of Tab on every console page: the link past the navigation. */
export const SKIP_LINK = 'a "Skip to the content"';

/**
 * The console's app at its issuer (startConsoleApp) and a Chromium for one browser spec: start() in
 * beforeAll, stop() in afterAll; the windows it opens are closed with it.
 */
export class ConsoleInChromium {
  /** The app's present, which signing in moves a code step on and the spec may move further. */
  readonly clock = new MovableClock();
  private readonly contexts: BrowserContext[] = [];
  private app?: { nest: NestFastifyApplication; origin: string };
  private chromium?: Chromium;

  /** The app, once started. */
  get nest(): NestFastifyApplication {
    return this.startedApp().nest;
  }

  /** The app's issuer origin (http://127.0.0.1:port), once started. */
  get origin(): string {
    return this.startedApp().origin;
  }

  /** Starts the app and Chromium side by side; when one fails, the failure is thrown and stop() closes the other. */
  async start(): Promise<void> {
    const [app, launched] = await Promise.allSettled([startConsoleApp(this.clock), launchChromium()]);
    if (app.status === 'fulfilled') this.app = { nest: app.value.nest, origin: app.value.issuer.origin };
    if (launched.status === 'fulfilled') this.chromium = launched.value.browser;
    const failure = [app, launched].find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  }

  /** Closes every window, Chromium and the app (those that started), drops the test database and removes what the start set in the environment. */
  async stop(): Promise<void> {
    await Promise.allSettled(this.contexts.map((context) => context.close()));
    await this.chromium?.close();
    await stopConsoleApp(this.app?.nest);
  }

  /** A fresh window (its own cookies) whose problems on the app's origin are recorded. */
  openWindow(): Promise<{ page: PlaywrightPage; watcher: Watcher }> {
    if (!this.chromium) throw new Error('Chromium is not started');
    return openWindowAt(this.chromium, this.contexts, this.origin);
  }

  /**
   * Signs `person` in to the console in `page` from a visit of `path`, as a person does: the
   * password, the one-time code (the clock moved a code step on first, so the code is new), and
   * straight back: the console is the server's own client, so no consent page (issue 48); it ends at `path`.
   */
  async signIn(page: PlaywrightPage, person: ConsolePerson, path = '/admin', stops: SignInStops = {}): Promise<void> {
    await page.goto(`${this.origin}${path}`);
    await stops.atSignInForm?.(page);
    await page.getByLabel('Username').fill(person.username);
    await page.getByLabel('Password').fill(person.password);
    await Promise.all([page.waitForURL((url) => url.pathname === '/login/code'), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
    this.clock.advance(30_000);
    await page.locator('input#code').fill(totpCode(person.key!, this.clock.now()));
    await follow(page, 'button', 'Continue', path);
  }

  private startedApp(): { nest: NestFastifyApplication; origin: string } {
    if (!this.app) throw new Error('The app is not started');
    return this.app;
  }
}

/** Where ConsoleInChromium.signIn lets a spec look on the way: on the sign-in form. */
export interface SignInStops {
  atSignInForm?: (page: PlaywrightPage) => Promise<unknown>;
}

/** The text of the page's h1. */
export const heading = (page: PlaywrightPage): Promise<string | null> => page.getByRole('heading', { level: 1 }).textContent();

/** A function that photographs a whole page into `${prefix}${name}.png` (its folder made first), for a person to look at. */
export function screenshotsAt(prefix: string): (page: PlaywrightPage, name: string) => Promise<Buffer> {
  return (page, name) => {
    mkdirSync(dirname(`${prefix}${name}.png`), { recursive: true });
    return page.screenshot({ path: `${prefix}${name}.png`, fullPage: true });
  };
}

/** Clicks the link or button named `name` and waits for the page at `path`. */
export async function follow(page: PlaywrightPage, role: 'link' | 'button', name: string | RegExp, path: RegExp | string): Promise<void> {
  const matches = (url: URL) => (typeof path === 'string' ? url.pathname === path : path.test(url.pathname));
  await Promise.all([page.waitForURL(matches), page.getByRole(role, { name, exact: typeof name === 'string' }).click()]);
}

/** Presses Tab until the element with this id, name=value or text has the focus: the keyboard alone. */
export async function tabTo(page: PlaywrightPage, target: string): Promise<void> {
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    const here = await page.evaluate(() => {
      const active = (globalThis as unknown as { document: { activeElement: { id: string; textContent: string | null; getAttribute(n: string): string | null; value?: string } | null } }).document.activeElement;
      return active ? [active.id, `${active.getAttribute('name')}=${active.value ?? ''}`, (active.textContent ?? '').trim()] : [];
    });
    if (here.includes(target)) return;
  }
  throw new Error(`Tab never reached ${target}`);
}
