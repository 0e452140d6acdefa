import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants.js';
import type { FastifyRequest } from 'fastify';

/**
 * Where a POST route that reads the session cookie says what it is to a browser, in Fastify's route
 * config: the Fetch Metadata check (app.setup.ts) refuses other sites' requests to exactly the
 * routes that say CookieForm, decided by the route the router matched. Every POST route whose
 * controller reaches the session says one or the other (test/architecture/cookie-form-routes).
 */
export const SESSION_COOKIE_USE = 'sessionCookieUse';

export const SessionCookieUse = {
  /** A form (or a page's script) of our own pages: posted from our origin, with the session's CSRF token. */
  Form: 'form',
  /** A request a standard has other sites' pages send here (an authorization request, a sign-out): it does no more than its GET, which any site can link to. */
  CrossSiteEntry: 'cross-site-entry',
} as const;
export type SessionCookieUse = (typeof SessionCookieUse)[keyof typeof SessionCookieUse];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What the route is to a browser carrying the session cookie (cookie-forms.ts). */
    sessionCookieUse?: SessionCookieUse;
    /** For a CrossSiteEntry: the standard that has other sites post to it. */
    crossSiteBecause?: string;
  }
}

/** Adds to the route's Fastify config, keeping what another decorator put there (@RouteConfig replaces it). */
function routeConfig(config: Record<string, unknown>): MethodDecorator {
  return (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const current = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as Record<string, unknown> | undefined) ?? {};
    Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...current, ...config }, handler);
  };
}

/**
 * A form of our own pages posted with the session cookie (RFC 9700 §4.7, RFC 6749 §10.12): besides
 * its CSRF token, a request that a browser labels as coming from another site (Sec-Fetch-Site, or an
 * Origin that is not ours) is refused with 403 before the route runs.
 */
export function CookieForm(): MethodDecorator {
  return routeConfig({ [SESSION_COOKIE_USE]: SessionCookieUse.Form });
}

/**
 * A POST that reads the session cookie but that other sites' pages send by design, as `standard`
 * says: not refused for its origin. It must do no more than the same request as a GET, which the
 * Fetch Metadata check never refuses (a link or a redirect from any site is a GET).
 */
export function CrossSiteEntry(standard: string): MethodDecorator {
  return routeConfig({ [SESSION_COOKIE_USE]: SessionCookieUse.CrossSiteEntry, crossSiteBecause: standard });
}

/** Whether the route `request` reached is a CookieForm: the Fetch Metadata check applies. */
export function isCookieForm(request: FastifyRequest): boolean {
  return request.routeOptions?.config?.[SESSION_COOKIE_USE] === SessionCookieUse.Form;
}
