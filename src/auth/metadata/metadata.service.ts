import { ACR_VALUES_SUPPORTED } from '../../common/authentication-context.js';
import { Inject, Injectable } from '@nestjs/common';
import { parConfig, type ParConfig } from '../../config/par.config.js';
import { ASYMMETRIC_JWS_ALGORITHMS } from '../../common/asymmetric-algorithms.js';
import { ClientAuthMethod, CodeChallengeMethod, GrantType, MacAlgorithm, ResponseMode, ResponseType, TokenType } from '../../common/oauth.constants.js';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { ScopeCatalog } from '../../scopes/scope-catalog.js';
import { SIGNING_ALGORITHMS } from '../../signing/signing-algorithms.js';
import { SubjectType } from '../../clients/openid-client-settings.js';
import { FAPI2_GRANT_TYPES, FAPI2_SIGNING_ALGORITHMS, SecurityProfiles } from '../../clients/security-profile.js';
import { USERINFO_CLAIMS } from '../../openid/userinfo.service.js';
import { Prompt } from '../authorize/authorization-request.js';
import { TokenEndpointService } from '../token/token-endpoint.service.js';

/** Where the JWKS is served (RFC 7517 §5), under the issuer. */
export const JWKS_PATH = '/.well-known/jwks.json';

/** RFC 8414 §2: exactly what this server supports. */
export interface AuthorizationServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  registration_endpoint: string;
  revocation_endpoint: string;
  revocation_endpoint_auth_methods_supported: string[];
  revocation_endpoint_auth_signing_alg_values_supported: string[];
  introspection_endpoint: string;
  introspection_endpoint_auth_methods_supported: string[];
  introspection_endpoint_auth_signing_alg_values_supported: string[];
  scopes_supported: string[];
  response_types_supported: string[];
  response_modes_supported: string[];
  grant_types_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  token_endpoint_auth_signing_alg_values_supported: string[];
  code_challenge_methods_supported: string[];
  authorization_response_iss_parameter_supported: boolean;
  /** RFC 9126 §5: where clients push authorization requests, and whether every client must. */
  pushed_authorization_request_endpoint: string;
  /** RFC 8628 §4; absent when FAPI2_REQUIRED holds every client to the code flow. */
  device_authorization_endpoint?: string;
  require_pushed_authorization_requests: boolean;
  /** RFC 9449 §5.1: the algorithms DPoP proofs may be signed with. */
  dpop_signing_alg_values_supported: string[];
  /** Latchkey extensions (RFC 8414 §2 allows more): the access token types and MAC algorithms issued. */
  token_types_supported: string[];
  /** Absent when no client may have MAC tokens (FAPI2_REQUIRED). */
  mac_algorithms_supported?: string[];
  service_documentation: string;
}

/**
 * OpenID Connect Discovery 1.0 §3: the OAuth document plus what an OpenID provider declares.
 * Only what works today is listed; request objects are not supported, which must be said (§3
 * defaults request_uri_parameter_supported to true).
 */
export interface OpenIdProviderMetadata extends AuthorizationServerMetadata {
  userinfo_endpoint: string;
  end_session_endpoint: string;
  backchannel_logout_supported: boolean;
  backchannel_logout_session_supported: boolean;
  prompt_values_supported: string[];
  subject_types_supported: string[];
  id_token_signing_alg_values_supported: string[];
  claims_supported: string[];
  acr_values_supported: string[];
  claims_parameter_supported: boolean;
  request_parameter_supported: boolean;
  request_uri_parameter_supported: boolean;
}

/** The claims an ID token carries (Core §2), then those userinfo releases by scope (§5.4). */
const ID_TOKEN_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'amr', 'acr', 'sid'];
const CLAIMS_SUPPORTED = [...new Set([...ID_TOKEN_CLAIMS, ...USERINFO_CLAIMS])];

@Injectable()
export class MetadataService {
  /** Built once: nothing in it changes while the server runs. */
  readonly document: AuthorizationServerMetadata;
  readonly openIdDocument: OpenIdProviderMetadata;

  constructor(@Inject(appConfig.KEY) app: AppConfig, @Inject(parConfig.KEY) par: ParConfig, tokenEndpoint: TokenEndpointService, scopes: ScopeCatalog, profiles: SecurityProfiles) {
    // With FAPI2_REQUIRED every client is held to FAPI 2.0: the document says only what such a client may use.
    const fapi = profiles.requiredEverywhere;
    const authMethods = fapi ? [ClientAuthMethod.PrivateKeyJwt] : Object.values(ClientAuthMethod);
    // §5.4.1: PS256, ES256 and EdDSA only.
    const algorithms = (all: readonly string[]) => (fapi ? all.filter((alg) => FAPI2_SIGNING_ALGORITHMS.has(alg)) : [...all]);
    this.document = {
      issuer: app.issuer,
      authorization_endpoint: `${app.issuer}/authorize`,
      token_endpoint: `${app.issuer}/token`,
      // RFC 7517: the keys that sign ID tokens.
      jwks_uri: `${app.issuer}${JWKS_PATH}`,
      // RFC 7591: for holders of a clients:register token.
      registration_endpoint: `${app.issuer}/register`,
      // RFC 7009: any client revokes its own tokens, public ones included.
      revocation_endpoint: `${app.issuer}/revoke`,
      revocation_endpoint_auth_methods_supported: authMethods,
      revocation_endpoint_auth_signing_alg_values_supported: algorithms(ASYMMETRIC_JWS_ALGORITHMS),
      // RFC 7662: only confidential clients registered for it.
      introspection_endpoint: `${app.issuer}/introspect`,
      introspection_endpoint_auth_methods_supported: fapi ? authMethods : [ClientAuthMethod.ClientSecretBasic, ClientAuthMethod.ClientSecretPost, ClientAuthMethod.PrivateKeyJwt],
      introspection_endpoint_auth_signing_alg_values_supported: algorithms(ASYMMETRIC_JWS_ALGORITHMS),
      scopes_supported: scopes.all(),
      // RFC 8414 §2 lists what the server supports; `token`, `id_token`, `implicit` and `password` work only
      // for clients an administrator registered for them (RFC 9700 §2.1.2, §2.4), every other one is refused.
      response_types_supported: fapi ? [ResponseType.Code] : Object.values(ResponseType),
      // Form Post Response Mode §2: form_post for every response type, the fragment only for the implicit ones.
      response_modes_supported: fapi ? [ResponseMode.Query, ResponseMode.FormPost] : Object.values(ResponseMode),
      grant_types_supported: [...tokenEndpoint.supportedGrantTypes, GrantType.Implicit].filter((grant) => !fapi || FAPI2_GRANT_TYPES.has(grant)),
      token_endpoint_auth_methods_supported: authMethods,
      // RFC 8414 §2: the algorithms private_key_jwt assertions may use (asymmetric only; no client_secret_jwt).
      token_endpoint_auth_signing_alg_values_supported: algorithms(ASYMMETRIC_JWS_ALGORITHMS),
      code_challenge_methods_supported: Object.values(CodeChallengeMethod),
      // RFC 9207 §3.
      authorization_response_iss_parameter_supported: true,
      pushed_authorization_request_endpoint: `${app.issuer}/par`,
      require_pushed_authorization_requests: par.required || fapi,
      // RFC 8628 §4: for clients registered for the device_code grant, which FAPI 2.0 does not allow.
      ...(fapi ? {} : { device_authorization_endpoint: `${app.issuer}/device_authorization` }),
      dpop_signing_alg_values_supported: [...profiles.dpopAlgorithms()],
      // Bearer by default; mac for clients registered with access_token_type "mac" (draft-ietf-oauth-v2-http-mac).
      token_types_supported: fapi ? [TokenType.Bearer] : Object.values(TokenType),
      // RFC 8414 §3.2: a claim with zero elements is omitted; under FAPI 2.0 there are no MAC tokens.
      ...(fapi ? {} : { mac_algorithms_supported: Object.values(MacAlgorithm) }),
      service_documentation: `${app.issuer}/`,
    };
    this.openIdDocument = {
      ...this.document,
      userinfo_endpoint: `${app.issuer}/userinfo`,
      // RP-Initiated Logout 1.0 §2.1; Back-Channel Logout 1.0 §2.1: logout tokens carry sid.
      end_session_endpoint: `${app.issuer}/session/end`,
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
      // Core §8: the user's id by default, or one per sector for clients registered as pairwise.
      subject_types_supported: Object.values(SubjectType),
      // RS256 by default, which every OpenID provider must offer (Core §15.1); ES256 and EdDSA per client.
      id_token_signing_alg_values_supported: algorithms(SIGNING_ALGORITHMS),
      claims_supported: CLAIMS_SUPPORTED,
      // Discovery §3: the levels an ID token's acr says and acr_values may ask for (common/authentication-context.ts).
      acr_values_supported: [...ACR_VALUES_SUPPORTED],
      // Core §3.1.2.1; select_account shows the sign-in form, where another person may sign in.
      prompt_values_supported: Object.values(Prompt),
      claims_parameter_supported: false,
      request_parameter_supported: false,
      // Request objects by reference (Core §6.2); the request_uri of a pushed request is another thing (RFC 9126 §4).
      request_uri_parameter_supported: false,
    };
  }
}
