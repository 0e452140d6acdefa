import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { RequestMethod, type Type } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants.js';
import { LoginSession } from '../../src/auth/interaction/login-session.js';
import { SESSION_COOKIE_USE, SessionCookieUse } from '../../src/http/cookie-forms.js';
import { PasskeyChallenges } from '../../src/passkeys/passkey-challenges.js';
import { TestApp } from '../helpers/test-app.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');

/** What Nest's Fetch Metadata check (app.enableCsrfProtection) says when it refuses a request. */
const REFUSED_FOR_ORIGIN = /Cross-origin request detected/;

/** Code that reads or writes the session cookie's contents (@fastify/secure-session's request.session). */
const TOUCHES_SESSION = /\b(?:request|req)\s*\.\s*session\b|\.session\s*\.\s*(?:get|set|regenerate|delete|touch|options|data)\s*\(/;

/** The classes that touch it, by file: a route reads the session cookie when its controller reaches one of them. */
const SESSION_READERS = new Map<string, Type>([
  ['auth/interaction/login-session.ts', LoginSession],
  ['passkeys/passkey-challenges.ts', PasskeyChallenges],
]);

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Whether `wrapper` depends on a session reader, directly or through its providers. */
function reachesSession(wrapper: InstanceWrapper, readers: Set<unknown>, seen = new Set<InstanceWrapper>()): boolean {
  if (readers.has(wrapper.metatype)) return true;
  if (seen.has(wrapper)) return false;
  seen.add(wrapper);
  const dependencies = [...(wrapper.getCtorMetadata() ?? []), ...(wrapper.getPropertiesMetadata() ?? []).map((property) => property.wrapper)];
  return dependencies.some((dependency) => dependency !== undefined && reachesSession(dependency, readers, seen));
}

interface SessionRoute {
  /** `POST /path`. */
  route: string;
  path: string;
  use: unknown;
  /** A cross-site entry's standard. */
  because: unknown;
}

/**
 * Issue 43, finding 7: the Fetch Metadata check guards the forms that ride on the session cookie,
 * and the set it guards is declared on the routes, not listed by hand (four forms were forgotten in
 * such a list). This walks the running application: every POST route whose controller reaches the
 * session (in Nest's dependency graph) must be a @CookieForm, which the running app then refuses
 * from another site, or a @CrossSiteEntry; a new form without either fails here by name.
 */
describe('routes that read the session cookie', () => {
  let app: TestApp;
  let routes: SessionRoute[];

  beforeAll(async () => {
    app = await TestApp.start();
    const readers = new Set<unknown>(SESSION_READERS.values());
    routes = [];
    for (const module of app.app.get(ModulesContainer).values()) {
      for (const wrapper of module.controllers.values()) {
        if (!reachesSession(wrapper, readers)) continue;
        const controller = wrapper.metatype as Type;
        const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
        for (const name of Object.getOwnPropertyNames(controller.prototype)) {
          const handler = (controller.prototype as Record<string, unknown>)[name];
          if (name === 'constructor' || typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
          if ((Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod) !== RequestMethod.POST) continue;
          const path = `/${[base, String(Reflect.getMetadata(PATH_METADATA, handler))].filter((part) => part !== '' && part !== '/').join('/')}`;
          const config = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as Record<string, unknown> | undefined;
          routes.push({ route: `POST ${path}`, path, use: config?.[SESSION_COOKIE_USE], because: config?.crossSiteBecause });
        }
      }
    }
  });
  afterAll(() => app?.stop());

  it('are read only through LoginSession and PasskeyChallenges (so the walk below finds them all)', () => {
    const touching = sourceFiles(SRC).filter((path) => TOUCHES_SESSION.test(readFileSync(path, 'utf8')));
    expect(touching.map((path) => relative(SRC, path)).sort()).toEqual([...SESSION_READERS.keys()].sort());
  });

  it('finds the forms (the walk itself works)', () => {
    expect(routes.map((r) => r.route)).toEqual(expect.arrayContaining(['POST /login', 'POST /consent', 'POST /account/passkeys/remove', 'POST /device/decision']));
    expect(routes.map((r) => r.route)).not.toContain('POST /token');
  });

  it('every POST route that reads the session cookie declares @CookieForm or @CrossSiteEntry', () => {
    expect(routes.filter((r) => r.use !== SessionCookieUse.Form && r.use !== SessionCookieUse.CrossSiteEntry).map((r) => r.route)).toEqual([]);
  });

  it('the cross-site entries are exactly the authorization request (RFC 6749 §3.1, OpenID Connect Core §3.1.2.1) and the sign-out request (RP-Initiated Logout §2)', () => {
    const entries = Object.fromEntries(routes.filter((r) => r.use === SessionCookieUse.CrossSiteEntry).map((r) => [r.route, r.because]));
    expect(entries).toEqual({ 'POST /authorize': 'OpenID Connect Core 1.0 §3.1.2.1', 'POST /session/end': 'OpenID Connect RP-Initiated Logout 1.0 §2', 'POST /federation/:idp/saml/acs': 'SAML 2.0 Bindings §3.5 (HTTP POST binding), Profiles §4.1.4', 'POST /federation/:idp/saml/slo': 'SAML 2.0 Bindings §3.5 (HTTP POST binding), Profiles §4.4' });
  });

  it('the running app refuses a cross-site POST to every cookie form before it runs (403), and lets the cross-site entries through', async () => {
    const statuses = Object.fromEntries(
      await Promise.all(
        routes.map(async ({ route, path }) => {
          const response = await fetch(app.url(path), { method: 'POST', headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
          // The check's own refusal, not a 403 the route's CSRF check would give a form without its token.
          const refused = response.status === 403 && REFUSED_FOR_ORIGIN.test(await response.text());
          return [route, refused ? 'refused' : 'let through'] as const;
        }),
      ),
    );
    const expected = Object.fromEntries(routes.map(({ route }) => [route, ['POST /authorize', 'POST /session/end', 'POST /federation/:idp/saml/acs', 'POST /federation/:idp/saml/slo'].includes(route) ? 'let through' : 'refused']));
    expect(statuses).toEqual(expected);
  });
});
