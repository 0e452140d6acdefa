/**
 * The checks every page of ours gets in the browser tests of issue 46 (test/browser/email-pages
 * and group-access): the same basics as test/browser/federation.e2e-spec.ts checks (lang, title,
 * one h1, a main landmark, labels, contrast SC 1.4.3, Tab order and visible focus SC 2.1.1, 2.4.7,
 * 1.4.11, nothing failing to load) and axe-core's WCAG 2.1 A and AA rules; and a full-page
 * screenshot, kept for a person to look at.
 */
import { expect } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser as Chromium, BrowserContext, Page as PlaywrightPage } from 'playwright-core';
import { axeViolations, pageStructure, submitButtons, tabOrder, textContrast, watchPage } from './a11y.js';

export type Watcher = ReturnType<typeof watchPage>;

/** Where the screenshots go: SCREENSHOTS_DIR, or /tmp/shots. */
export const SHOTS = process.env.SCREENSHOTS_DIR ?? '/tmp/shots';

export async function screenshot(page: PlaywrightPage, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/**
 * The page is accessible: `firstStop` is the first element Tab reaches from the top (as
 * support/a11y.ts names it), every submit button is reachable with a visible focus indicator, and
 * axe-core reports nothing. `textsChecked`: at least that many texts had their contrast measured;
 * `maxStops`: how far Tab is followed (a long form has more stops before its submit button).
 */
export async function expectAccessible(page: PlaywrightPage, watcher: Watcher, firstStop: string | null, textsChecked = 2, maxStops = 20): Promise<void> {
  expect(await pageStructure(page)).toEqual({ lang: 'en', title: expect.stringMatching(/\S · Latchkey$/), h1Count: 1, mainCount: 1, unlabelledControls: [], stylesheetsLoaded: true, icon: 'data:,' });
  const contrast = await textContrast(page);
  expect(contrast.failures).toEqual([]);
  expect(contrast.checked).toBeGreaterThanOrEqual(textsChecked);
  const stops = await tabOrder(page, maxStops);
  expect(stops[0]?.element ?? null).toBe(firstStop);
  expect(stops.filter((stop) => !stop.focusVisible || (stop.outlineContrast !== null && stop.outlineContrast < 3))).toEqual([]);
  const reachable = new Set(stops.map((stop) => stop.element));
  expect((await submitButtons(page)).filter((button) => !reachable.has(button))).toEqual([]);
  await page.waitForLoadState('networkidle');
  expect(watcher.problems()).toEqual({ consoleErrors: [], pageErrors: [], failedRequests: [] });
  expect(await axeViolations(page)).toEqual([]);
}

/** The id (or tag) of the element that has the focus now. */
export async function focused(page: PlaywrightPage): Promise<string | null> {
  const active = page.locator(':focus');
  return (await active.count()) === 0 ? null : ((await active.getAttribute('id')) ?? (await active.evaluate((element) => (element as unknown as { tagName: string }).tagName.toLowerCase())));
}

/** A fresh browser window (its own cookies) whose problems on `origin` are recorded; its context joins `contexts`, for the test to close. */
export async function openWindowAt(chromium: Chromium, contexts: BrowserContext[], origin: string): Promise<{ page: PlaywrightPage; watcher: Watcher }> {
  const context = await chromium.newContext({ viewport: { width: 1024, height: 768 }, locale: 'en-US' });
  contexts.push(context);
  // A missing element fails in 10 s rather than Playwright's 30.
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  return { page, watcher: watchPage(page, origin) };
}
