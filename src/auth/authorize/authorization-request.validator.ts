import { isAdminScope } from '../../scopes/admin-scopes.js';
import { Inject, Injectable } from '@nestjs/common';
import type { Client } from '../../clients/client.entity.js';
import { ClientsService } from '../../clients/clients.service.js';
import { responseTypesOfClient } from '../../clients/client-information.js';
import { SecurityProfiles } from '../../clients/security-profile.js';
import { parConfig, type ParConfig } from '../../config/par.config.js';
import { PushedRequests, PushedRequestUnusable, REQUEST_URI_PREFIX } from '../../pushed-requests/pushed-requests.service.js';
import { redirectUriMatches } from '../../clients/redirect-uri.policy.js';
import { GrantType, ResponseMode, ResponseType } from '../../common/oauth.constants.js';
import { isSubset, parseScope, splitScope } from '../../common/scope.js';
import {
  AuthorizationRedirectError,
  InvalidRequestError,
  InvalidScopeError,
  RequestNotSupportedError,
  RequestUriNotSupportedError,
  UnauthorizedClientError,
  UnsupportedResponseTypeError,
  OAuthError,
  UnverifiedClientOrRedirectError,
} from '../errors/oauth-error.js';
import { holdsOpenId } from '../../openid/openid-scope.js';
import { ResourceIndicators } from '../resource-indicators.js';
import { OPENID_SCOPE, ScopeCatalog } from '../../scopes/scope-catalog.js';
import { AUTHORIZATION_PARAMS, type AuthorizationRequest } from './authorization-request.js';
import { refuseChallenge, resolveAcrValues, resolveChallenge, resolveMaxAge, resolvePrompt } from './authorization-parameters.js';

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

const MAX_PARAM_LENGTH = 2048;
type Query = Record<string, unknown>;
/** Core §6.2's answer when a request_uri names a request object to fetch (only pushed requests' URNs are taken). */
const REQUEST_OBJECT_URIS_UNSUPPORTED = 'Request objects by reference (a request_uri that is a URL, OpenID Connect Core §6.2) are not supported; push the request to the pushed_authorization_request_endpoint (RFC 9126) and send the request_uri it answers';
/** Core §6.1's answer when a request object arrives. */
const REQUEST_OBJECTS_UNSUPPORTED = 'Request objects (the request parameter, OpenID Connect Core §6.1) are not supported; send the parameters themselves, or push them to the pushed_authorization_request_endpoint (RFC 9126)';

/** How a request reached the validator: at /authorize (the default), or pushed to /par (RFC 9126 §2.1). */
export interface ValidationContext {
  pushed?: boolean;
}

/**
 * Validates GET /authorize in the order RFC 6749 §4.1.2.1 demands: first the client and the
 * redirect URI, whose errors are shown to the user and never redirected (otherwise we would be an
 * open redirector); then everything else, whose errors go back to the verified redirect URI.
 */
@Injectable()
export class AuthorizationRequestValidator {
  constructor(
    private readonly clients: ClientsService,
    private readonly scopes: ScopeCatalog,
    private readonly pushedRequests: PushedRequests,
    private readonly resources: ResourceIndicators,
    private readonly profiles: SecurityProfiles,
    @Inject(parConfig.KEY) private readonly par: ParConfig,
  ) {}

  async validate(query: Query, rawQuery: string, context: ValidationContext = {}): Promise<AuthorizationRequest> {
    const clientId = query.client_id;
    if (typeof clientId !== 'string' || clientId === '') {
      throw new UnverifiedClientOrRedirectError('invalid_request', 'The request must name exactly one client_id.');
    }
    const client = clientId.length <= 64 ? await this.clients.findById(clientId) : null;
    if (!client) throw new UnverifiedClientOrRedirectError('invalid_client', 'The application that sent you here is not registered with this server.');

    // RFC 9126 §4: a pushed request's parameters are the request; the query names it and the client,
    // and any other parameter in it is ignored. A request_uri is never pushed (§2.1; ParService refuses it).
    let pushedRequestId: string | undefined;
    // Core §6.2: a request_uri that is a URL names a request object to fetch, which this server does
    // not do; it is refused with request_uri_not_supported once the redirect URI is known (below).
    const requestObjectUri = typeof query.request_uri === 'string' && query.request_uri !== '' && !query.request_uri.startsWith(REQUEST_URI_PREFIX);
    // RFC 6749 §3.1: a parameter sent without a value is treated as omitted.
    if (query.request_uri !== undefined && query.request_uri !== '' && !requestObjectUri && !context.pushed) {
      if (typeof query.request_uri !== 'string' || query.request_uri.length > MAX_PARAM_LENGTH) {
        throw new UnverifiedClientOrRedirectError('invalid_request_uri', 'The request must name exactly one request_uri.');
      }
      const pushed = await this.pushedRequests.resolve(query.request_uri, client.id).catch((error: unknown) => {
        throw error instanceof PushedRequestUnusable ? new UnverifiedClientOrRedirectError('invalid_request_uri', error.message) : error;
      });
      query = { ...pushed.parameters, client_id: client.id };
      pushedRequestId = pushed.id;
    }

    const requested = query.redirect_uri;
    if (requested !== undefined && typeof requested !== 'string') {
      throw new UnverifiedClientOrRedirectError('invalid_request', 'The request must not name more than one redirect_uri.');
    }
    let redirectUri: string;
    if ((requested === undefined || requested === '') && context.pushed && this.profiles.applies(client)) {
      // FAPI 2.0 §5.3.2.2: a pushed request names its redirect_uri, even when the client registered one.
      throw new UnverifiedClientOrRedirectError('invalid_request', 'Under the FAPI 2.0 Security Profile a pushed request must name its redirect_uri.');
    }
    if (requested === undefined || requested === '') {
      // OpenID Connect Core §3.1.2.1: in an authentication request redirect_uri is REQUIRED, even for a
      // client with one registered URI (RFC 6749 §3.1.2.3 lets plain OAuth requests leave it out).
      if (typeof query.scope === 'string' && holdsOpenId(query.scope)) {
        throw new UnverifiedClientOrRedirectError('invalid_request', 'An OpenID Connect request must name its redirect_uri (OpenID Connect Core §3.1.2.1).');
      }
      // §3.1.2.3: without redirect_uri, the client must have exactly one registered.
      if (client.redirectUris.length !== 1) {
        throw new UnverifiedClientOrRedirectError('invalid_request', 'The request must name a redirect_uri, because this application has registered several.');
      }
      redirectUri = client.redirectUris[0];
    } else {
      // Exact string comparison, no prefix or pattern matching (RFC 9700 §2.1, §4.1.3), except
      // the port of a loopback IP redirect URI (RFC 8252 §7.3).
      if (!redirectUriMatches(client.redirectUris, requested)) {
        throw new UnverifiedClientOrRedirectError('invalid_request', 'The redirect_uri is not registered for this application.');
      }
      redirectUri = requested;
    }

    // From here on the redirect URI is trusted: errors are sent back to the client, in the response
    // mode of the response type (RFC 6749 §4.1.2.1 query, §4.2.2.1 fragment), or posted when the
    // request asked for form_post (Form Post Response Mode §2) and the redirect URI can take a POST.
    const state = typeof query.state === 'string' && query.state !== '' ? query.state : undefined;
    // FAPI 2.0 (§5.3.2.2): the code flow with PAR and PKCE S256 only, whatever else the client was registered for.
    const fapi = this.profiles.applies(client);
    const responseType = this.permittedResponseType(query.response_type, client, fapi);
    const defaultMode: ResponseMode = responseType === ResponseType.Token || responseType === ResponseType.IdToken ? ResponseMode.Fragment : ResponseMode.Query;
    const responseModeAsked = nonEmpty(query.response_mode);
    const formPost = responseModeAsked === ResponseMode.FormPost && /^https?:/i.test(redirectUri);
    const responseMode: ResponseMode = formPost ? ResponseMode.FormPost : defaultMode;
    const fail = (error: OAuthError): never => {
      throw new AuthorizationRedirectError(error, redirectUri, state, responseMode);
    };

    // Core §6.1: without request object support the answer is request_not_supported, never the unsigned parameters beside the object.
    if (query.request !== undefined && query.request !== '') fail(new RequestNotSupportedError(REQUEST_OBJECTS_UNSUPPORTED));
    if (requestObjectUri && !context.pushed) fail(new RequestUriNotSupportedError(REQUEST_OBJECT_URIS_UNSUPPORTED));

    // RFC 9126 §5: a client (or a server) that requires pushed requests accepts no other kind.
    if (pushedRequestId === undefined && !context.pushed && (this.par.required || client.openId.requirePushedAuthorizationRequests || fapi)) {
      fail(new InvalidRequestError('This application must push its authorization request to the pushed_authorization_request_endpoint first (RFC 9126), and send only its request_uri and client_id here'));
    }

    for (const name of AUTHORIZATION_PARAMS) {
      const value = query[name];
      if (Array.isArray(value)) fail(new InvalidRequestError(`The ${name} parameter must not be repeated`));
      if (typeof value === 'string' && value.length > MAX_PARAM_LENGTH) fail(new InvalidRequestError(`The ${name} parameter is too long`));
      if (value !== undefined && typeof value !== 'string') fail(new InvalidRequestError(`The ${name} parameter is malformed`));
    }

    // Multiple Response Types §2.1: response_mode may name the response type's own default (the query
    // for codes, the fragment for tokens; never the query for a token, which would put it in logs), or
    // form_post (Form Post Response Mode §2) for an http(s) redirect URI; the answer would not be where
    // the client looks otherwise.
    if (responseModeAsked !== undefined && responseModeAsked !== responseMode) {
      fail(new InvalidRequestError(`response_mode ${responseModeAsked.slice(0, 40)} is not supported here; leave it out, or send ${defaultMode} or form_post`));
    }

    if (query.response_type === undefined || query.response_type === '') fail(new InvalidRequestError('The response_type parameter is required'));
    // response_type=token and id_token exist only for a client an administrator registered for them
    // beside the implicit grant (RFC 6749 §4.2, Core §3.2); for every other client they are unsupported,
    // as RFC 9700 §2.1.2 advises, and under FAPI 2.0 (§5.3.2.2: code only) whatever the registration.
    if (responseType === undefined) {
      const why = fapi ? 'under the FAPI 2.0 Security Profile' : 'for this client (an administrator registers a client for token or id_token)';
      fail(new UnsupportedResponseTypeError(`Only response_type=code is supported ${why}`));
    }
    if (responseType === ResponseType.Code && !client.grantTypes.includes(GrantType.AuthorizationCode)) {
      fail(new UnauthorizedClientError('This client is not registered for the authorization code grant'));
    }
    const implicit = responseType !== ResponseType.Code;
    const nonce = nonEmpty(query.nonce);
    // Core §3.2.2.1: an ID token straight from the authorization endpoint is an OpenID authentication,
    // and its nonce is REQUIRED (§3.2.2.11: the client's one defence against a replayed ID token).
    if (responseType === ResponseType.IdToken && !(typeof query.scope === 'string' && holdsOpenId(query.scope))) {
      fail(new InvalidRequestError('response_type=id_token is an OpenID Connect authentication: its scope must include openid'));
    }
    if (responseType === ResponseType.IdToken && nonce === undefined) fail(new InvalidRequestError('response_type=id_token requires a nonce (OpenID Connect Core §3.2.2.1)'));

    // A person grants data scopes the client registered (a scope whose collection was removed no
    // longer is one) and OpenID Connect's scopes, which every client may ask for; with a code (never
    // through the browser's fragment), the admin scopes the client registered (issue 48), which
    // AuthorizeService then bounds by the person's administrator roles.
    const registered = splitScope(client.scope);
    const adminScopes = responseType === ResponseType.Code ? registered.filter(isAdminScope) : [];
    const grantable = [...registered.filter((s) => this.scopes.isDataScope(s)), ...adminScopes, ...this.scopes.identityScopes()];
    const scope = this.resolveScope(query.scope as string | undefined, grantable, fail);
    // FAPI 2.0 §5.4.1: an OpenID authentication only for a client whose ID tokens the profile allows.
    const idTokenProblem = scope.includes(OPENID_SCOPE) ? this.profiles.idTokenAlgorithmProblem(client) : undefined;
    if (idTokenProblem) fail(new UnauthorizedClientError(idTokenProblem));
    const codeChallenge = implicit ? refuseChallenge(query, fail) : resolveChallenge(query, client.isPublic || fapi, fail);
    const resources = await this.resolveResources(query.resource, fail);
    const dpopJkt = nonEmpty(query.dpop_jkt);
    // RFC 7638 SHA-256 thumbprint: 43 base64url characters.
    if (dpopJkt !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(dpopJkt)) fail(new InvalidRequestError('dpop_jkt must be the base64url SHA-256 JWK thumbprint of the DPoP key (RFC 9449 §10)'));

    return {
      client,
      responseType: responseType!,
      responseMode,
      redirectUri,
      redirectUriInRequest: requested !== undefined && requested !== '',
      scope,
      state,
      codeChallenge,
      // Core §3.1.2.1: echoed in the ID token; meaningful only with openid, harmless without.
      nonce,
      prompt: resolvePrompt(query.prompt as string | undefined, fail),
      maxAge: resolveMaxAge(query.max_age as string | undefined, fail),
      acrValues: resolveAcrValues(query.acr_values as string | undefined),
      loginHint: nonEmpty(query.login_hint),
      idTokenHint: nonEmpty(query.id_token_hint),
      idpHint: nonEmpty(query.idp_hint),
      rawQuery,
      resources,
      dpopJkt,
      pushedRequestId,
    };
  }

  /**
   * The response type a request may have from this client: code; token or id_token when an
   * administrator registered the client for it beside the implicit grant (never under FAPI 2.0);
   * undefined otherwise. A missing or repeated one reads as code, and is refused in the query below.
   */
  private permittedResponseType(asked: unknown, client: Client, fapi: boolean): ResponseType | undefined {
    if (asked === ResponseType.Code) return ResponseType.Code;
    if ((asked === ResponseType.Token || asked === ResponseType.IdToken) && !fapi && responseTypesOfClient(client).includes(asked)) return asked;
    return asked === undefined || asked === '' || Array.isArray(asked) ? ResponseType.Code : undefined;
  }

  /** RFC 8707 §2.1: each resource known; invalid_target to the client otherwise. */
  private async resolveResources(value: unknown, fail: (e: OAuthError) => never): Promise<string[] | undefined> {
    try {
      const resources = this.resources.parse(value);
      if (resources !== undefined) await this.resources.resolve(resources);
      return resources;
    } catch (error) {
      if (error instanceof OAuthError) fail(error);
      throw error;
    }
  }

  /** RFC 6749 §3.3: the requested scope, or the client's registered (data) scope when none is requested. */
  private resolveScope(value: string | undefined, allowed: string[], fail: (e: OAuthError) => never): string[] {
    if (value === undefined || value === '') return allowed.filter((s) => !this.scopes.isIdentityScope(s));
    const parsed = parseScope(value) ?? fail(new InvalidScopeError('The scope parameter is malformed'));
    // Core §3.1.2.1: in an OpenID request, "scope values used that are not understood by an
    // implementation SHOULD be ignored" (address, phone, another provider's own); a scope this server
    // knows but the client may not have is still refused (RFC 6749 §4.1.2.1 invalid_scope).
    const scope = parsed.includes(OPENID_SCOPE) ? parsed.filter((s) => this.scopes.isKnown(s)) : parsed;
    if (!isSubset(scope, allowed)) fail(new InvalidScopeError('The requested scope is not allowed for this client'));
    return scope;
  }
}
