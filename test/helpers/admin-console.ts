import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AdminRolesService } from '../../src/admin/admin-roles.service.js';
import { Clock } from '../../src/common/clock.js';
import { SecondFactors } from '../../src/factors/second-factors.service.js';
import type { AdminRole } from '../../src/scopes/admin-scopes.js';
import { UsersService } from '../../src/users/users.service.js';
import { startAtIssuer } from './app-at-issuer.js';
import { Browser, decodeEntities, hiddenFields, isConsentPage, isLoginPage, type Page } from './browser.js';
import type { MovableClock } from './movable-clock.js';
import { dropTestDatabase } from './test-database.js';
import { totpCode } from './totp.js';

/** The console's cookie (src/admin-console/console-cookie.ts). */
export const CONSOLE_COOKIE = 'latchkey_admin';

/** A person for the console tests: their roles (granted as `users:roles` grants them) and the key of the one-time codes they enrolled. */
export interface ConsolePerson {
  username: string;
  password: string;
  userId: string;
  /** Base32 key of their authenticator app; undefined when they enrolled none. */
  key?: string;
}

/** A person holding `roles`, with one-time codes enrolled (as the console's second-factor floor needs) unless `secondFactor` is false. */
export async function consolePerson(nest: NestFastifyApplication, roles: readonly AdminRole[], secondFactor = true): Promise<ConsolePerson> {
  const username = `${roles.length > 0 ? 'admin' : 'person'}_${Math.random().toString(36).slice(2, 10)}`;
  const password = 'correct horse battery staple';
  const user = await nest.get(UsersService).create(username, password);
  for (const role of roles) await nest.get(AdminRolesService).grant(user.id, role, 'cli');
  if (!secondFactor) return { username, password, userId: user.id };
  const factors = nest.get(SecondFactors);
  const key = factors.newSecret();
  const codes = await factors.confirm(user, key, totpCode(key, nest.get(Clock).now()), '127.0.0.1');
  if (!codes) throw new Error('Enrolling one-time codes failed');
  return { username, password, userId: user.id, key };
}

/** Whether a page is the second step of a sign-in (the one-time code). */
export function isCodePage(page: Page): boolean {
  return page.status === 200 && page.body.includes('action="/login/code"');
}

/**
 * Follows the browser from `page` as a person would: redirects, the sign-in form (password), the
 * one-time code (at the app's clock: a code is accepted once per 30-second step, so callers move the
 * clock between sign-ins); until a page that is none of those. A consent page is a failure: the
 * console is the server's own client and never asks (issue 48, clients/first-party.ts).
 */
export async function followSignIn(browser: Browser, page: Page, person: ConsolePerson, now: () => Date): Promise<Page> {
  let current = page;
  for (let hop = 0; hop < 25; hop++) {
    if (current.status >= 300 && current.status < 400 && current.location) current = await browser.get(current.location);
    else if (isLoginPage(current)) current = await browser.submit(current, '/login', { username: person.username, password: person.password });
    else if (isCodePage(current)) current = await browser.post('/login/code', { ...hiddenFields(current.body, '/login/code'), code: totpCode(person.key!, now()) });
    else if (isConsentPage(current)) throw new Error(`The console's sign-in showed a consent page (${person.username})`);
    else return current;
  }
  throw new Error(`The sign-in did not end: ${current.status} ${current.location ?? ''}`);
}

/** Signs `person` in to the console from a fresh visit of `path`; the console page it ends on. */
export async function signInToConsole(browser: Browser, person: ConsolePerson, now: () => Date, path = '/admin'): Promise<Page> {
  return followSignIn(browser, await browser.get(path), person, now);
}

/** The real app at its issuer as a console spec runs it, and its database. */
export interface ConsoleApp {
  nest: NestFastifyApplication;
  issuer: URL;
  db: DataSource;
}

/** Starts the real app at its issuer for a console spec: sign-in throttling off (the specs sign in many times), `env` added, its Clock reading `clock`. */
export async function startConsoleApp(clock: MovableClock, env: Record<string, string> = {}): Promise<ConsoleApp> {
  const { nest, issuer } = await startAtIssuer({ LOGIN_THROTTLE_ENABLED: 'false', ...env });
  clock.attachTo(nest);
  return { nest, issuer, db: nest.get<DataSource>(getDataSourceToken()) };
}

/** Closes the app startConsoleApp started (if it did), drops the test database and removes LOGIN_THROTTLE_ENABLED and the variables in `envNames`. */
export async function stopConsoleApp(nest: NestFastifyApplication | undefined, envNames: readonly string[] = []): Promise<void> {
  await nest?.close();
  await dropTestDatabase();
  for (const name of ['LOGIN_THROTTLE_ENABLED', ...envNames]) delete process.env[name];
}

/** A fresh browser signed in to the console as `person` from a visit of `path` (the clock moved a code step on first, so their one-time code is new), and the page it ends on. */
export async function signInWithNewBrowser(origin: string, person: ConsolePerson, clock: MovableClock, path = '/admin'): Promise<{ browser: Browser; page: Page }> {
  clock.advance(30_000);
  const browser = new Browser(origin);
  return { browser, page: await signInToConsole(browser, person, clock.now, path) };
}

/** Text as the page escaped it, read back; undefined stays undefined (a pattern that found nothing). */
export function readBack(html: string | undefined): string | undefined {
  return html === undefined ? undefined : decodeEntities(html);
}

/** The console page's heading (its h1), read back. */
export const headingOf = (page: Page): string | undefined => readBack(/<h1 id="page-title">([^<]*)<\/h1>/.exec(page.body)?.[1]);

/** The notice a console page shows after a change (role="status"), read back; undefined when there is none. */
export const noticeOf = (page: Page): string | undefined => readBack(/<p class="notice" role="status">([^<]*)<\/p>/.exec(page.body)?.[1]);

/** The first message of a console page's alert (role="alert"), read back; undefined when there is none. */
export const alertOf = (page: Page): string | undefined => readBack(/<div class="alert" role="alert"><p>([^<]*)<\/p>/.exec(page.body)?.[1]);

/** The CSRF token of the console's forms on a page (every form carries the same one). */
export function consoleCsrf(page: Page): string {
  const match = /name="csrf_token" value="([^"]+)"/.exec(page.body);
  if (!match) throw new Error(`No CSRF token on the page (${page.status}):\n${page.body.slice(0, 2000)}`);
  return match[1];
}

/** The client secret shown once on a client's page, or undefined. */
export function secretShownOn(page: Page): string | undefined {
  return /id="client-secret" value="([^"]+)"/.exec(page.body)?.[1];
}

/**
 * What a console form page says beside `field` (views/admin-console/field-error.eta): the message,
 * or undefined; and whether it is linked both ways: the field is described by the message and
 * aria-invalid, and the error summary links to the field.
 */
export function fieldProblemOn(page: Page, field: string): { message: string | undefined; linked: boolean } {
  const message = new RegExp(`<p class="field-error" id="${field}-error"><span class="visually-hidden">Error: </span>([^<]*)</p>`).exec(page.body)?.[1];
  const described = new RegExp(`id="${field}"[^>]*aria-describedby="[^"]*${field}-error"[^>]*aria-invalid="true"`).test(page.body);
  return { message: message === undefined ? undefined : decodeEntities(message), linked: described && page.body.includes(`<a href="#${field}">`) };
}
