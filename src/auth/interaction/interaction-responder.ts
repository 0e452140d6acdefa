import type { FastifyReply } from 'fastify';
import type { Page } from './page-renderer.js';

/** What the browser-facing endpoints answer: a page, or a redirect. */
export type InteractionOutcome = { kind: 'page'; page: Page } | { kind: 'redirect'; location: string; status: 302 | 303 };

/**
 * Content-Security-Policy of every page: nothing but our stylesheet, no framing (clickjacking,
 * RFC 6819 §4.4.1.9), no scripts. form-action lists where a form submission may end up, redirects
 * included, because browsers apply it to the redirect after a POST. A page with passkeys (WebAuthn
 * needs JavaScript) may run scripts from our own origin, never inline, and fetch from it alone. The
 * form_post page runs its one inline submit, named by its hash, and nothing else.
 */
function contentSecurityPolicy(formTargets: string[], scripts: boolean, inlineScripts: string[]): string {
  const targets = ["'self'", ...new Set(formTargets)].join(' ');
  const script = scripts ? "script-src 'self'; connect-src 'self'; " : inlineScripts.length > 0 ? `script-src ${inlineScripts.map((hash) => `'${hash}'`).join(' ')}; ` : '';
  return `default-src 'none'; ${script}style-src 'self'; img-src 'self' data:; form-action ${targets}; frame-ancestors 'none'; base-uri 'none'`;
}

export function sendOutcome(reply: FastifyReply, outcome: InteractionOutcome): FastifyReply {
  // Pages and redirects may carry codes and CSRF tokens: never cache them (RFC 6749 §10.12, RFC 9700 §4.2.4).
  reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
  if (outcome.kind === 'redirect') {
    return reply.code(outcome.status).header('Location', outcome.location).send();
  }
  const { page } = outcome;
  for (const [name, value] of Object.entries(page.headers ?? {})) reply.header(name, value);
  return reply
    .code(page.status)
    .header('Content-Type', 'text/html; charset=utf-8')
    .header('Content-Security-Policy', contentSecurityPolicy(page.formTargets, page.scripts === true, page.inlineScripts ?? []))
    .header('X-Frame-Options', 'DENY')
    .send(page.html);
}

/** The CSP source expression for a redirect URI: its origin, or its scheme for private-use schemes. */
export function formTargetOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
}
