import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { passkeyConfig, type PasskeyConfig } from '../../config/passkey.config.js';
import { mailConfig, type MailConfig } from '../../config/mail.config.js';
import type { FastifyRequest } from 'fastify';
import { ScopeCatalog } from '../../scopes/scope-catalog.js';
import { SignInMethods } from '../../identity-providers/sign-in-methods.js';
import { UpstreamOrigins } from '../../identity-providers/upstream-origins.js';
import type { Client } from '../../clients/client.entity.js';
import type { User } from '../../users/user.entity.js';
import type { EnrolmentView } from '../../factors/second-factors.service.js';
import type { AuthorizationRequest } from '../authorize/authorization-request.js';
import { formTargetOf, type InteractionOutcome } from './interaction-responder.js';
import { LoginSession } from './login-session.js';
import { PageRenderer } from './page-renderer.js';

/** Builds the pages a person sees at the authorization server. */
@Injectable()
export class Pages {
  constructor(
    private readonly renderer: PageRenderer,
    private readonly session: LoginSession,
    private readonly scopes: ScopeCatalog,
    @Inject(passkeyConfig.KEY) private readonly passkeys: PasskeyConfig,
    @Inject(mailConfig.KEY) private readonly mail: MailConfig,
    private readonly signInMethods: SignInMethods,
    private readonly upstreamOrigins: UpstreamOrigins,
  ) {}

  /**
   * The login form. `returnTo` is where to continue after login (an /authorize URL or /). Below it,
   * a link per upstream identity provider (issue 45) the application allows; the form itself only
   * when the application allows a local sign-in.
   */
  async login(request: FastifyRequest, options: { returnTo: string; authorization?: AuthorizationRequest; username?: string; failed?: boolean }): Promise<InteractionOutcome> {
    const { authorization } = options;
    const ways = await this.signInMethods.forClient(authorization?.client);
    // Home-realm discovery sends the form's POST on to a provider: CSP form-action covers the redirects that follow it.
    const discovery = ways.local ? await this.upstreamOrigins.of(ways.upstream.filter((provider) => provider.settings.domains.length > 0)) : [];
    const page = this.renderer.render(
      'login',
      {
        title: 'Sign in',
        clientName: authorization?.client.name,
        username: options.username ?? '',
        failed: options.failed ?? false,
        csrfToken: this.session.csrfToken(request),
        returnTo: options.returnTo,
        // "Sign in with a passkey" (views/passkey-sign-in.eta), or why there is none: an IP-address issuer.
        passkeys: { available: this.passkeys.rpId !== null },
        localSignIn: ways.local,
        upstream: ways.upstream.map((provider) => ({ id: provider.id, name: provider.displayName })),
        upstreamDomains: ways.upstream.flatMap((provider) => provider.settings.domains).join(', '),
        // Issue 46: "Forgot your password?" only when email is set up; "Create an account" only when self-registration is on.
        forgotPassword: ways.local && this.mail.smtpUrl !== null,
        signUp: ways.local && this.mail.selfRegistration,
      },
      {
        status: options.failed ? 401 : 200,
        scripts: this.passkeys.rpId !== null && ways.local,
        formTargets: [...(authorization ? [formTargetOf(authorization.redirectUri)] : []), ...discovery],
        headers: options.failed ? { 'WWW-Authenticate': 'Form realm="latchkey"' } : undefined,
      },
    );
    return { kind: 'page', page };
  }

  /**
   * POST /login while failed attempts make this address and username wait (rate-limit/
   * login-throttle.service.ts): 429 with Retry-After (RFC 6585 §4), and a way back to the form.
   */
  loginThrottled(retryAfterSeconds: number, returnTo: string): InteractionOutcome {
    const page = this.renderer.render(
      'error',
      { title: 'Too many attempts', status: 429, error: 'too_many_requests', message: `Too many failed attempts. Try again in ${describeWait(retryAfterSeconds)}.`, retryUrl: returnTo },
      { status: 429, headers: { 'Retry-After': String(retryAfterSeconds) } },
    );
    return { kind: 'page', page };
  }

  consent(request: FastifyRequest, user: User, authorization: AuthorizationRequest): InteractionOutcome {
    const page = this.renderer.render(
      'consent',
      {
        title: `Allow ${authorization.client.name}?`,
        clientName: authorization.client.name,
        // Registered https URLs only (clients.service.ts checks them); shown as plain links, no remote logo image.
        clientUri: authorization.client.clientUri,
        policyUri: authorization.client.policyUri,
        tosUri: authorization.client.tosUri,
        redirectHost: describeDestination(authorization.redirectUri),
        scopes: this.scopes.describeAll(authorization.scope),
        username: user.username,
        csrfToken: this.session.csrfToken(request),
        authorizationRequest: authorization.rawQuery,
      },
      { formTargets: [formTargetOf(authorization.redirectUri)] },
    );
    return { kind: 'page', page };
  }

  /**
   * Issue 46: the person signed in is not in a group the application requires. 403; the button
   * posts to /consent, which sends the application access_denied; or sign in as someone else.
   */
  noAccess(request: FastifyRequest, user: User, authorization: AuthorizationRequest): InteractionOutcome {
    const again = new URLSearchParams(authorization.rawQuery);
    again.set('prompt', 'login');
    const page = this.renderer.render(
      'no-access',
      {
        title: `No access to ${authorization.client.name}`,
        clientName: authorization.client.name,
        personName: user.name ?? user.username,
        username: user.username,
        redirectHost: describeDestination(authorization.redirectUri),
        csrfToken: this.session.csrfToken(request),
        authorizationRequest: authorization.rawQuery,
        // A pushed request ignores parameters beside its request_uri (RFC 9126 §4): signing out is the way there.
        switchUrl: authorization.pushedRequestId === undefined ? `/authorize?${again}` : undefined,
      },
      { status: 403, formTargets: [formTargetOf(authorization.redirectUri)] },
    );
    return { kind: 'page', page };
  }

  /** The second step of a sign-in (or a step-up): the code from the authenticator app, or a recovery code. */
  secondFactor(request: FastifyRequest, user: User, options: { authorization?: AuthorizationRequest; failed?: boolean } = {}): InteractionOutcome {
    const { authorization } = options;
    const page = this.renderer.render(
      'second-factor',
      { title: 'Enter your code', clientName: authorization?.client.name, username: user.username, failed: options.failed ?? false, csrfToken: this.session.csrfToken(request) },
      { status: options.failed ? 401 : 200, formTargets: authorization ? [formTargetOf(authorization.redirectUri)] : [] },
    );
    return { kind: 'page', page };
  }

  /** Enrolment of one-time codes: the QR code and the key, and the field for the first code. `required`: the person may not go on without. */
  enrolOneTimeCodes(request: FastifyRequest, enrolment: EnrolmentView, options: { returnTo: string; required?: boolean; failed?: boolean; formTargets?: string[] }): InteractionOutcome {
    const page = this.renderer.render(
      'enrol-one-time-codes',
      { title: 'Set up one-time codes', qrSvg: enrolment.qrSvg, groupedSecret: enrolment.groupedSecret, required: options.required ?? false, failed: options.failed ?? false, returnTo: options.returnTo, csrfToken: this.session.csrfToken(request) },
      { status: options.failed ? 400 : 200, formTargets: options.formTargets ?? [] },
    );
    return { kind: 'page', page };
  }

  /** Recovery codes, shown once, right after they were made. */
  recoveryCodes(codes: string[], options: { message: string; continueTo: string }): InteractionOutcome {
    return { kind: 'page', page: this.renderer.render('recovery-codes', { title: 'Your recovery codes', codes, message: options.message, continueTo: options.continueTo }) };
  }

  /** The home page of someone not signed in (a signed-in person goes to /account): what this server is, and a way to sign in. */
  home(): InteractionOutcome {
    return { kind: 'page', page: this.renderer.render('home', { title: 'Latchkey' }) };
  }

  /** RP-Initiated Logout 1.0 §2: asks before signing out on a request that does not prove who sent it. */
  async logoutConfirmation(request: FastifyRequest, user: User, client: Client | undefined, carried: Record<string, string>): Promise<InteractionOutcome> {
    const redirect = carried.post_logout_redirect_uri;
    // A session an upstream provider signed in signs out there too, before going on.
    const upstream = await this.upstreamOrigins.of();
    const page = this.renderer.render(
      'logout',
      { title: 'Sign out?', clientName: client?.name, username: user.username, csrfToken: this.session.csrfToken(request), carried },
      { formTargets: [...(redirect ? [formTargetOf(redirect)] : []), ...upstream] },
    );
    return { kind: 'page', page };
  }

  /** After an RP-initiated sign-out with nowhere registered to go back to. */
  signedOut(_request: FastifyRequest, client: Client | undefined): InteractionOutcome {
    return { kind: 'page', page: this.renderer.render('signed-out', { title: 'Signed out', clientName: client?.name }) };
  }

  /**
   * OAuth 2.0 Form Post Response Mode §2: the response parameters as the hidden fields of a form
   * that posts itself to the redirect URI. Every value is HTML-escaped by the template (Eta's
   * autoEscape); the one inline script submits the form and is allowed by its hash alone, and a
   * browser without script has the button. Sent with 200 (§2: the User Agent gets the form).
   */
  formPost(redirectUri: string, params: Record<string, string | undefined>): InteractionOutcome {
    const fields = Object.entries(params).filter((field): field is [string, string] => field[1] !== undefined);
    const page = this.renderer.render(
      'form-post',
      { title: 'Returning to the application', destination: describeDestination(redirectUri), action: redirectUri, fields, submitScript: FORM_POST_SCRIPT },
      { formTargets: [formTargetOf(redirectUri)], inlineScripts: [FORM_POST_SCRIPT_HASH] },
    );
    return { kind: 'page', page };
  }

  error(status: number, error: string, message: string, options: { retryUrl?: string } = {}): InteractionOutcome {
    const page = this.renderer.render('error', { title: titleFor(status), status, error, message, retryUrl: options.retryUrl }, { status });
    return { kind: 'page', page };
  }
}

/** The form_post page's only script: submit its form once loaded. Constant, so that its hash is too. */
const FORM_POST_SCRIPT = 'document.forms[0].submit();';
const FORM_POST_SCRIPT_HASH = `sha256-${createHash('sha256').update(FORM_POST_SCRIPT).digest('base64')}`;

function titleFor(status: number): string {
  if (status === 403) return 'Request refused';
  if (status === 404) return 'Page not found';
  if (status >= 500) return 'Something went wrong';
  return 'This request cannot be completed';
}

/** "1 second", "40 seconds", "15 minutes": a wait as a person reads it, rounded up. */
function describeWait(seconds: number): string {
  if (seconds < 120) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

function describeDestination(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.host || url.protocol.slice(0, -1);
}
