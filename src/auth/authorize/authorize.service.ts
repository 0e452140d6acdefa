import { AdminRolesService } from '../../admin/admin-roles.service.js';
import { ResourceIndicators } from '../resource-indicators.js';
import { JwtAccessTokens } from '../token/jwt-access-tokens.js';
import { FAPI2_CODE_TTL_SECONDS, SecurityProfiles } from '../../clients/security-profile.js';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { parse as parseQuery } from 'node:querystring';
import { uuidv7 } from '../../common/random.js';
import { CodesService } from '../../codes/codes.service.js';
import { GrantType, ResponseType, TokenType } from '../../common/oauth.constants.js';
import { formatScope } from '../../common/scope.js';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { legacyGrantsConfig, type LegacyGrantsConfig } from '../../config/legacy-grants.config.js';
import { ConsentsService } from '../../consents/consents.service.js';
import { Transactions } from '../../database/transactions.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { PushedRequests } from '../../pushed-requests/pushed-requests.service.js';
import { OPENID_SCOPE } from '../../scopes/scope-catalog.js';
import { TokensService } from '../../tokens/tokens.service.js';
import type { User } from '../../users/user.entity.js';
import { AccessDeniedError, AuthorizationRedirectError, UnverifiedClientOrRedirectError } from '../errors/oauth-error.js';
import { AuthenticationPolicy, NOT_IN_REQUIRED_GROUP, type NextStep } from './authentication-policy.js';
import { GroupAccessRule } from '../../groups/group-access-rule.js';
import type { InteractionOutcome } from '../interaction/interaction-responder.js';
import { LoginSession } from '../interaction/login-session.js';
import { SignInMethods } from '../../identity-providers/sign-in-methods.js';
import { Pages } from '../interaction/pages.js';
import type { AuthorizationRequest } from './authorization-request.js';
import { AuthorizationRequestValidator } from './authorization-request.validator.js';
import { codeResponse, deliver, errorResponse, idTokenResponse, implicitResponse } from './authorization-response.js';
import { IdTokenIssuer } from '../../openid/id-token.issuer.js';
import { formatAmr } from '../../common/authentication-context.js';
import { SecondFactors } from '../../factors/second-factors.service.js';
import { ONE_TIME_CODES_PAGE, safeReturnTo, SECOND_FACTOR_PAGE } from '../interaction/login.service.js';

export interface ConsentForm {
  csrf_token?: unknown;
  decision?: unknown;
  authorization_request?: unknown;
}

/**
 * The authorization endpoint's flow (RFC 6749 §4.1.1, §4.1.2): validate the request, make sure a
 * user is logged in, ask for consent unless already given for this scope, then redirect with a code.
 */
@Injectable()
export class AuthorizeService {
  constructor(
    private readonly resources: ResourceIndicators,
    private readonly jwtAccessTokens: JwtAccessTokens,
    private readonly profiles: SecurityProfiles,
    private readonly validator: AuthorizationRequestValidator,
    private readonly policy: AuthenticationPolicy,
    private readonly session: LoginSession,
    private readonly consents: ConsentsService,
    private readonly codes: CodesService,
    private readonly pages: Pages,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
    private readonly tokens: TokensService,
    private readonly metrics: MetricsService,
    @Inject(legacyGrantsConfig.KEY) private readonly legacy: LegacyGrantsConfig,
    private readonly pushedRequests: PushedRequests,
    private readonly transactions: Transactions,
    private readonly factors: SecondFactors,
    private readonly idTokens: IdTokenIssuer,
    private readonly signInMethods: SignInMethods,
    private readonly groupAccess: GroupAccessRule,
    private readonly adminRoles: AdminRolesService,
  ) {}

  /** GET /authorize: sign in, consent, or neither, as the person's session and the request's OpenID parameters say. */
  async start(request: FastifyRequest): Promise<InteractionOutcome> {
    const rawQuery = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    const authorization = await this.validator.validate(request.query as Record<string, unknown>, rawQuery);
    // The session, its person and their consent in one round trip (issue 47).
    const signedIn = await this.session.currentUserConsenting(request, authorization.client.id, authorization.scope);
    const step = await this.nextStep(request, authorization, signedIn?.user ?? null, signedIn?.consented ?? false);
    switch (step.kind) {
      case 'login':
        return this.askSignIn(request, authorization, step.returnTo);
      case 'consent':
        return this.pages.consent(request, step.user, authorization);
      case 'approve':
        return this.approve(request, step.user, this.session.authTime(request), authorization, 302, signedIn?.clientRecorded);
      case 'second_factor':
      case 'enrol':
        return this.askMore(request, step);
      case 'no_access':
        return this.pages.noAccess(request, step.user, authorization);
    }
  }

  /**
   * Step-up (issue 33): the signed-in person is asked only for the second factor, which signs them
   * in again with it; or, having none and needing one, enrols it first. Either comes back here.
   */
  private askMore(request: FastifyRequest, step: Extract<NextStep, { kind: 'second_factor' | 'enrol' }>): InteractionOutcome {
    if (step.kind === 'second_factor') {
      // The code page redirects there after the code: only to our own authorization endpoint, as after a password.
      this.session.awaitSecondFactor(request, step.user, safeReturnTo(step.returnTo));
      return { kind: 'redirect', status: 302, location: SECOND_FACTOR_PAGE };
    }
    return { kind: 'redirect', status: 302, location: `${ONE_TIME_CODES_PAGE}?return_to=${encodeURIComponent(step.returnTo)}` };
  }

  /**
   * POST /authorize (Core §3.1.2.1: the same request, form-serialized): the browser is sent to it
   * as a GET, which validates it like any other and, being a navigation, carries the SameSite=Lax
   * session cookie that a client's cross-site POST does not. Nothing is decided here.
   */
  fromForm(form: unknown): InteractionOutcome {
    const query = new URLSearchParams();
    if (form !== null && typeof form === 'object' && !Array.isArray(form)) {
      for (const [name, value] of Object.entries(form)) {
        for (const item of Array.isArray(value) ? value : [value]) if (typeof item === 'string') query.append(name, item);
      }
    }
    const location = `/authorize?${query}`;
    // The GET's request line must fit in the HTTP parser's limit (16 KiB with the headers).
    if (location.length > MAX_FORM_AS_QUERY) return this.pages.error(400, 'invalid_request', 'This authorization request is too long.');
    return { kind: 'redirect', status: 303, location };
  }

  /** POST /consent: the user's Allow or Deny. The carried request is validated again from scratch. */
  async decide(request: FastifyRequest, form: ConsentForm): Promise<InteractionOutcome> {
    if (!this.session.csrfMatches(request, form.csrf_token)) return this.staleForm(form);
    const rawQuery = typeof form.authorization_request === 'string' ? form.authorization_request : '';
    const authorization = await this.validator.validate(parseQuery(rawQuery), rawQuery);
    // The form answers the consent question, not the sign-in one: the request's own prompt=login,
    // max_age and id_token_hint (Core §3.1.2.1: "MUST attempt to actively re-authenticate") decide
    // here exactly as at GET /authorize, so a form taken from the sign-in page cannot skip it.
    // The session, its person (active) and whether the client already signed them in through it,
    // in one round trip, as at GET /authorize (issue 47); the form itself is the consent.
    const signedIn = await this.session.currentUserConsenting(request, authorization.client.id, authorization.scope);
    const step = await this.nextStep(request, authorization, signedIn?.user ?? null, true);
    if (step.kind === 'login') return this.askSignIn(request, authorization, step.returnTo);
    if (step.kind === 'second_factor' || step.kind === 'enrol') return this.askMore(request, step);
    // The no-access page's button (issue 46), or any consent form of a person no longer in the client's groups: back to the client with access_denied.
    if (step.kind === 'no_access') return this.refuseWithoutAccess(authorization);
    const user = step.user;

    if (form.decision === 'allow') {
      // What the person allowed so far came with the session (issue 47): grant need not read it again.
      await this.consents.grant(user.id, authorization.client.id, authorization.scope, signedIn ? { current: signedIn.consentScope } : undefined);
      return this.approve(request, user, this.session.authTime(request), authorization, 303, signedIn?.clientRecorded);
    }
    if (form.decision === 'deny') {
      await this.useUpPushedRequest(authorization);
      const denied = new AccessDeniedError('The user denied the request');
      return deliver(errorResponse(authorization.redirectUri, denied, authorization.state, this.app.issuer, authorization.responseMode), 303, this.pages);
    }
    return this.pages.error(400, 'invalid_request', 'Please choose Allow or Deny.');
  }

  /** RFC 6749 §4.1.2.1 access_denied (with state and iss, RFC 9207) for a person not in a group the client requires (issue 46). */
  private async refuseWithoutAccess(authorization: AuthorizationRequest): Promise<InteractionOutcome> {
    await this.useUpPushedRequest(authorization);
    const denied = new AccessDeniedError(NOT_IN_REQUIRED_GROUP);
    return deliver(errorResponse(authorization.redirectUri, denied, authorization.state, this.app.issuer, authorization.responseMode), 303, this.pages);
  }

  /**
   * Issues the code, or the token or ID token of the implicit flows, and sends it back to the client (RFC 6749 §4.1.2, §4.2.2, Core §3.2.2.5, RFC 9207).
   * `clientRecorded`: whether the client already signed the person in through this session, when GET /authorize read it.
   */
  private async approve(request: FastifyRequest, user: User, authTime: Date | null, authorization: AuthorizationRequest, status: 302 | 303, clientRecorded?: boolean): Promise<InteractionOutcome> {
    this.session.forgetSignInAsked(request);
    if (authorization.responseType === ResponseType.Token) return this.approveImplicit(user, authorization, status);
    // An OpenID authentication ties the client to this sign-in: its ID tokens name the session, and its end reaches the client.
    const sid = authorization.scope.includes(OPENID_SCOPE) ? await this.session.signedInto(request, authorization.client.id, clientRecorded) : null;
    if (authorization.responseType === ResponseType.IdToken) return this.approveIdToken(request, user, authTime, sid, authorization, status);
    const grant = {
      clientId: authorization.client.id,
      userId: user.id,
      redirectUri: authorization.redirectUri,
      redirectUriInRequest: authorization.redirectUriInRequest,
      // Issue 48: only the admin scopes the person's roles allow; the rest stands (RFC 6749 §3.3: the token response names the narrower scope).
      scope: formatScope(await this.adminRoles.withinRoles(user.id, authorization.scope)),
      codeChallenge: authorization.codeChallenge,
      nonce: authorization.nonce ?? null,
      authTime,
      sid,
      amr: formatAmr(this.session.authenticationMethods(request)),
      resources: authorization.resources?.join(' ') ?? null,
      dpopJkt: authorization.dpopJkt ?? null,
      ttlSeconds: this.profiles.applies(authorization.client) ? FAPI2_CODE_TTL_SECONDS : undefined,
    };
    const pushedRequestId = authorization.pushedRequestId;
    // A pushed request yields one code (RFC 9126 §4): it is used up in the transaction that writes the code.
    const code =
      pushedRequestId === undefined
        ? await this.codes.issue(grant)
        : await this.transactions.run(async (manager) => ((await this.pushedRequests.consume(pushedRequestId, manager)) ? this.codes.issue(grant, manager) : null));
    if (code === null) throw new UnverifiedClientOrRedirectError('invalid_request_uri', 'This request_uri has been used already or has expired.');
    return deliver(codeResponse(authorization.redirectUri, code, authorization.state, this.app.issuer, authorization.responseMode), status, this.pages);
  }

  /**
   * OpenID Connect Core §3.2.2.5: response_type=id_token, the ID token and no access token, to a
   * client an administrator registered for the implicit grant (the validator checked that, the
   * nonce and the scope). With no userinfo to ask, it carries the scopes' claims (§5.4).
   */
  private async approveIdToken(request: FastifyRequest, user: User, authTime: Date | null, sid: string | null, authorization: AuthorizationRequest, status: 302 | 303): Promise<InteractionOutcome> {
    if (!(await this.useUpPushedRequest(authorization))) throw new UnverifiedClientOrRedirectError('invalid_request_uri', 'This request_uri has been used already or has expired.');
    const amr = this.session.authenticationMethods(request);
    const idToken = await this.idTokens.issue({ client: authorization.client, userId: user.id, authTime, amr, sid, nonce: authorization.nonce, scope: authorization.scope });
    this.metrics.tokenIssued(GrantType.Implicit);
    return deliver(idTokenResponse(authorization.redirectUri, idToken, authorization.state, this.app.issuer, authorization.responseMode), status, this.pages);
  }

  /**
   * RFC 6749 §4.2.2: the access token goes straight to the browser, in the fragment, so it never
   * reaches the client's server logs; it lives IMPLICIT_TOKEN_TTL_SECONDS (short: it has been
   * through the browser) and comes without a refresh token (§4.2.2: MUST NOT be issued).
   */
  private async approveImplicit(user: User, authorization: AuthorizationRequest, status: 302 | 303): Promise<InteractionOutcome> {
    if (!(await this.useUpPushedRequest(authorization))) throw new UnverifiedClientOrRedirectError('invalid_request_uri', 'This request_uri has been used already or has expired.');
    const audience = authorization.resources === undefined ? undefined : await this.resources.resolve(authorization.resources);
    const issued = await this.tokens.issue({
      familyId: uuidv7(),
      clientId: authorization.client.id,
      userId: user.id,
      scope: formatScope(authorization.scope),
      accessTokenTtlSeconds: this.legacy.implicitTokenTtlSeconds,
      ...this.jwtAccessTokens.restrictedTo(audience, authorization.client),
    });
    this.metrics.tokenIssued(GrantType.Implicit);
    const token = { accessToken: issued.accessToken, tokenType: TokenType.Bearer, expiresIn: issued.expiresIn, scope: issued.scope };
    return deliver(implicitResponse(authorization.redirectUri, token, authorization.state, this.app.issuer, authorization.responseMode), status, this.pages);
  }

  /**
   * The authentication policy's answer for this browser and request: sign in, ask for consent or
   * approve. The one place both GET /authorize and POST /consent ask it; a refusal (prompt=none,
   * an id_token_hint that is not ours) goes to the client's redirect URI (Core §3.1.2.6).
   */
  private async nextStep(request: FastifyRequest, authorization: AuthorizationRequest, user: User | null, consented: boolean): Promise<Exclude<NextStep, { kind: 'refuse' }>> {
    const authTime = user ? this.session.authTime(request) : null;
    const signedInSinceAsked = this.session.signedInSinceAsked(request, signInRequestKey(authorization.rawQuery));
    const amr = this.session.authenticationMethods(request);
    const secondFactorRequired = user ? this.factors.mustHaveSecondFactor(user) : false;
    // Read only when the level asked is not met: most requests need no lookup of the person's factors.
    const factors = () => (user ? this.factors.enrolled(user.id) : Promise.resolve({ oneTimeCodes: false, passkeys: false }));
    const via = this.session.signedInVia(request);
    const signInWayAllowed = user === null || this.signInMethods.allows(authorization.client, via === null ? { local: true } : { idp: via });
    // Issue 46: one query when the client requires groups, none otherwise (GroupAccessRule, shared with the refresh grant).
    const groupAllowed = user === null || (await this.groupAccess.allows(authorization.client, user.id));
    const step = await this.policy.next(authorization, { user, authTime, consented, signedInSinceAsked, amr, factors, secondFactorRequired, signInWayAllowed, groupAllowed });
    if (step.kind !== 'refuse') return step;
    await this.useUpPushedRequest(authorization);
    throw new AuthorizationRedirectError(step.error, authorization.redirectUri, authorization.state, authorization.responseMode);
  }

  /** The sign-in page, remembering (in the encrypted cookie) that this request asked for it. */
  private async askSignIn(request: FastifyRequest, authorization: AuthorizationRequest, returnTo: string): Promise<InteractionOutcome> {
    this.session.askSignIn(request, signInRequestKey(authorization.rawQuery));
    // idp_hint (issue 45): straight to that upstream provider when the client allows it; otherwise the page offers every way it allows.
    if (authorization.idpHint !== undefined && (await this.signInMethods.forClient(authorization.client)).upstream.some((provider) => provider.id === authorization.idpHint)) {
      const hint = authorization.loginHint === undefined ? '' : `&login_hint=${encodeURIComponent(authorization.loginHint)}`;
      return { kind: 'redirect', status: 302, location: `/federation/${authorization.idpHint}/start?return_to=${encodeURIComponent(returnTo)}${hint}` };
    }
    return this.pages.login(request, { returnTo, authorization, username: authorization.loginHint });
  }

  /** Uses up the pushed request an authorization came from, if any; false when another response used it first. */
  private async useUpPushedRequest(authorization: AuthorizationRequest): Promise<boolean> {
    const id = authorization.pushedRequestId;
    return id === undefined || this.transactions.run((manager) => this.pushedRequests.consume(id, manager));
  }

  private staleForm(form: ConsentForm): InteractionOutcome {
    const rawQuery = typeof form.authorization_request === 'string' ? form.authorization_request : undefined;
    return this.pages.error(403, 'invalid_request', 'This form has expired or was not sent from this site. Please start again.', {
      retryUrl: rawQuery !== undefined ? `/authorize?${rawQuery}` : undefined,
    });
  }
}

/** The longest POST /authorize that is turned into a GET. */
const MAX_FORM_AS_QUERY = 8192;

/** Names an authorization request by its query (which the browser brings back unchanged after signing in), without keeping the query in the cookie. */
function signInRequestKey(rawQuery: string): string {
  return createHash('sha256').update(rawQuery).digest('base64url');
}
