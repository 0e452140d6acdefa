import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Client } from '../../clients/client.entity.js';
import { ClientsService } from '../../clients/clients.service.js';
import { IdTokenHintReader } from '../../openid/id-token-hint.reader.js';
import { SubjectIdentifiers } from '../../openid/subject-identifiers.js';
import type { User } from '../../users/user.entity.js';
import type { InteractionOutcome } from '../interaction/interaction-responder.js';
import { SignOutRedirects } from '../../identity-providers/sign-out-redirects.js';
import { LoginSession } from '../interaction/login-session.js';
import { Pages } from '../interaction/pages.js';

/** RP-Initiated Logout 1.0 §2 parameters, as received (query of a GET, form of a POST). */
export interface EndSessionParams {
  id_token_hint?: unknown;
  client_id?: unknown;
  post_logout_redirect_uri?: unknown;
  state?: unknown;
  csrf_token?: unknown;
  decision?: unknown;
}

interface EndSessionRequest {
  client?: Client;
  /** Where to send the browser afterwards: registered for the client, exactly (§3.1). */
  redirectTo?: string;
  state?: string;
  /** Whether an ID token we issued names the person signed in here: then no confirmation is asked. */
  trusted: boolean;
}

const MAX_PARAM_LENGTH = 4096;
/** The §2 parameters this endpoint reads, and carries through a confirmation or a redirect. */
const LOGOUT_PARAMS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state'] as const;

/** A parameter's value; empty counts as omitted (RFC 6749 §3.1). Call after malformedParam found none. */
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The first §2 parameter sent twice (an array) or too long: §4 wants such a request refused, not read as if it lacked it. */
function malformedParam(params: EndSessionParams): string | undefined {
  return LOGOUT_PARAMS.find((name) => params[name] !== undefined && (typeof params[name] !== 'string' || params[name].length > MAX_PARAM_LENGTH));
}

/**
 * OpenID Connect RP-Initiated Logout 1.0: a client sends the person here to sign out. A request
 * whose id_token_hint names the person signed in on this browser ends the session at once; any
 * other asks the person first (§2: the OP SHOULD ask, lest any site sign people out). The browser
 * then goes to the client's registered post_logout_redirect_uri, with state, or sees a page saying
 * it is signed out. Never to an unregistered URI: that would be an open redirector.
 */
@Injectable()
export class EndSessionService {
  constructor(
    private readonly clients: ClientsService,
    private readonly hints: IdTokenHintReader,
    private readonly subjects: SubjectIdentifiers,
    private readonly session: LoginSession,
    private readonly pages: Pages,
    private readonly signOutRedirects: SignOutRedirects,
  ) {}

  /** GET or POST /session/end. */
  async start(request: FastifyRequest, params: EndSessionParams): Promise<InteractionOutcome> {
    const user = await this.session.currentUser(request);
    // A client's form POST comes from its own site, and browsers keep the SameSite=Lax session
    // cookie from cross-site POSTs: with no session in sight, the same request as a GET navigation
    // (which carries the cookie) finds out whether someone is signed in, instead of redirecting
    // back as though the sign-out had happened.
    if (user === null && request.method === 'POST' && malformedParam(params) === undefined) {
      return { kind: 'redirect', status: 303, location: `/session/end?${new URLSearchParams(rawParams(params))}` };
    }
    const parsed = await this.parse(request, params, user);
    if ('error' in parsed) return parsed.error;
    if (user && !parsed.trusted) return this.pages.logoutConfirmation(request, user, parsed.client, rawParams(params));
    if (!user) return this.done(request, parsed);
    return this.signOut(request, parsed);
  }

  /** POST /session/end/confirm: the person's answer on the confirmation page. */
  async confirm(request: FastifyRequest, params: EndSessionParams): Promise<InteractionOutcome> {
    if (!this.session.csrfMatches(request, params.csrf_token)) {
      return this.pages.error(403, 'invalid_request', 'This form has expired or was not sent from this site. Please sign out again.');
    }
    const parsed = await this.parse(request, params, await this.session.currentUser(request));
    if ('error' in parsed) return parsed.error;
    if (params.decision !== 'sign_out') return { kind: 'redirect', status: 303, location: '/' };
    return this.signOut(request, parsed);
  }

  /**
   * Ends the session, then goes where the request says; a session that an upstream identity
   * provider signed in first visits its logout (issue 45), which comes back to that place (the
   * signed-out page, when the request names no post_logout_redirect_uri: GET /session/end again).
   */
  private async signOut(request: FastifyRequest, parsed: EndSessionRequest): Promise<InteractionOutcome> {
    const sessionRowId = this.session.sessionRowId(request);
    await this.session.logOut(request);
    const next = parsed.redirectTo ? this.redirectLocation(parsed) : '/session/end';
    const location = await this.signOutRedirects.through(request, sessionRowId, next);
    return location === next && !parsed.redirectTo ? this.done(request, parsed) : { kind: 'redirect', status: 303, location };
  }

  private redirectLocation({ redirectTo, state }: EndSessionRequest): string {
    const location = new URL(redirectTo!);
    if (state !== undefined) location.searchParams.set('state', state);
    return location.href;
  }

  private done(request: FastifyRequest, parsed: EndSessionRequest): InteractionOutcome {
    if (!parsed.redirectTo) return this.pages.signedOut(request, parsed.client);
    return { kind: 'redirect', status: 303, location: this.redirectLocation(parsed) };
  }

  private async parse(request: FastifyRequest, params: EndSessionParams, user: User | null): Promise<EndSessionRequest | { error: InteractionOutcome }> {
    const refuse = (message: string) => ({ error: this.pages.error(400, 'invalid_request', message) });
    const malformed = malformedParam(params);
    if (malformed) return refuse(`The sign-out request sent ${malformed} more than once, or one longer than ${MAX_PARAM_LENGTH} characters.`);
    const hintValue = text(params.id_token_hint);
    const hint = hintValue === undefined ? undefined : await this.hints.read(hintValue);
    if (hintValue !== undefined && !hint) return refuse('The sign-out request came with an ID token this server did not issue.');
    const clientId = text(params.client_id) ?? hint?.audience[0];
    // §2: client_id and id_token_hint, when both are sent, must agree.
    if (hint && clientId !== undefined && !hint.audience.includes(clientId)) return refuse('The sign-out request names one application and carries the ID token of another.');
    const client = clientId === undefined ? undefined : ((await this.clients.findById(clientId)) ?? undefined);
    if (clientId !== undefined && !client) return refuse('The application that sent you here is not registered with this server.');
    const redirectTo = text(params.post_logout_redirect_uri);
    if (redirectTo !== undefined && !client?.openId.postLogoutRedirectUris.includes(redirectTo)) {
      return refuse('The address to return to after signing out is not registered for this application.');
    }
    const trusted =
      hint !== undefined && client !== undefined && user !== null && hint.subject === this.subjects.of(client, user.id) && (hint.sid === undefined || hint.sid === this.session.publicSessionId(request));
    return { client, redirectTo, state: text(params.state), trusted };
  }
}

/** The parameters to carry through the confirmation form, validated again on return. */
function rawParams(params: EndSessionParams): Record<string, string> {
  const carried: Record<string, string> = {};
  for (const name of LOGOUT_PARAMS) {
    const value = text(params[name]);
    if (value !== undefined) carried[name] = value;
  }
  return carried;
}
