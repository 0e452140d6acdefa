import { Inject, Injectable } from '@nestjs/common';
import { ClientAuthMethod, GrantType, TokenType } from '../common/oauth.constants.js';
import { fapiConfig, type FapiConfig } from '../config/fapi.config.js';
import { DPOP_SIGNING_ALGORITHMS } from '../dpop/dpop-algorithms.js';
import type { Client } from './client.entity.js';

/** A client's security profile (a Latchkey extension of RFC 7591 metadata: security_profile). */
export const SecurityProfile = { Default: 'default', Fapi2: 'fapi2' } as const;
export type SecurityProfile = (typeof SecurityProfile)[keyof typeof SecurityProfile];

/** FAPI 2.0 Security Profile §5.3.2.1: authorization codes live at most 60 seconds. */
export const FAPI2_CODE_TTL_SECONDS = 60;

/** FAPI 2.0 §5.4.1: the JWS algorithms the profile allows (Ed25519 is EdDSA's fully specified name, RFC 9864). */
export const FAPI2_SIGNING_ALGORITHMS: ReadonlySet<string> = new Set(['PS256', 'ES256', 'EdDSA', 'Ed25519']);

/** The DPoP proof algorithms FAPI 2.0 leaves (§5.4.1: no RS256, no ES384). */
const FAPI2_DPOP_ALGORITHMS: readonly string[] = DPOP_SIGNING_ALGORITHMS.filter((alg) => FAPI2_SIGNING_ALGORITHMS.has(alg));

/** The code flow (with refresh) and a client's own tokens; never implicit nor password (§5.3.2.1). */
export const FAPI2_GRANT_TYPES: ReadonlySet<string> = new Set([GrantType.AuthorizationCode, GrantType.RefreshToken, GrantType.ClientCredentials]);

/** What a registration must hold to be registered under FAPI 2.0, as the rules below read it. */
export interface ProfileCandidate {
  isPublic: boolean;
  tokenEndpointAuthMethod: ClientAuthMethod;
  grantTypes: readonly string[];
  accessTokenType: TokenType;
  requirePushedAuthorizationRequests: boolean;
  dpopBoundAccessTokens: boolean;
  idTokenSignedResponseAlg: string;
  tokenEndpointAuthSigningAlg: string | null;
}

/**
 * The FAPI 2.0 Security Profile (OpenID Foundation, final), decided here: which clients it holds,
 * and what a registration must say to be held to it. A client is held to it when registered with
 * security_profile "fapi2", or when FAPI2_REQUIRED holds every client to it. Each rule is enforced
 * where its subject lives (PAR and PKCE at the authorization request, DPoP and the grant at the
 * token endpoint, private_key_jwt and the assertion's audience at client authentication, the
 * code's lifetime where codes are issued); each of those asks `applies`.
 */
@Injectable()
export class SecurityProfiles {
  constructor(@Inject(fapiConfig.KEY) private readonly config: FapiConfig) {}

  get requiredEverywhere(): boolean {
    return this.config.required;
  }

  /** Is this client held to FAPI 2.0? */
  applies(client: Client): boolean {
    return this.config.required || client.openId.securityProfile === SecurityProfile.Fapi2;
  }

  /**
   * FAPI 2.0 §5.4.1 for ID tokens, at run time: why a client held to the profile cannot be issued
   * one (it is registered for an algorithm the profile does not allow: a client registered with
   * the RS256 default before FAPI2_REQUIRED), or undefined. Asked where an OpenID authentication
   * is requested and before a grant that would issue an ID token writes anything; the ID token is
   * never signed with another algorithm than the one the client expects to check.
   */
  idTokenAlgorithmProblem(client: Client): string | undefined {
    const alg = client.openId.idTokenSignedResponseAlg;
    if (!this.applies(client) || FAPI2_SIGNING_ALGORITHMS.has(alg)) return undefined;
    return `The FAPI 2.0 Security Profile this client is held to allows ID tokens signed with ES256 or EdDSA only (§5.4.1), and the client is registered for ${alg}: an administrator must change its id_token_signed_response_alg`;
  }

  /**
   * The algorithms a DPoP proof may be signed with (RFC 9449 §5.1), narrowed by FAPI 2.0 §5.4.1
   * for a client held to the profile. Without a client (a protected resource checks the proof
   * before it knows whose token it is, and a lookup per read would be a second query): what every
   * proof may use, narrowed only when FAPI2_REQUIRED holds every client to the profile. The same
   * list is what the metadata (dpop_signing_alg_values_supported) and the DPoP challenges name.
   */
  dpopAlgorithms(client?: Client): readonly string[] {
    return (client ? this.applies(client) : this.config.required) ? FAPI2_DPOP_ALGORITHMS : DPOP_SIGNING_ALGORITHMS;
  }

  /**
   * Why a registration does not meet the profile, one line per field (empty when it does): a
   * confidential client authenticating with private_key_jwt (mutual TLS is not offered),
   * sender-constrained tokens (DPoP), the code flow only (§5.3.2.1), pushed requests (§5.3.2.2),
   * ID tokens and assertions signed with the profile's algorithms (§5.4.1), bearer-or-DPoP tokens.
   */
  problems(candidate: ProfileCandidate): string[] {
    const problems: string[] = [];
    if (candidate.isPublic || candidate.tokenEndpointAuthMethod !== ClientAuthMethod.PrivateKeyJwt) problems.push('token_endpoint_auth_method must be "private_key_jwt"');
    const grants = candidate.grantTypes.filter((grant) => !FAPI2_GRANT_TYPES.has(grant));
    if (grants.length > 0) problems.push(`grant_types must not include ${grants.join(', ')}`);
    if (candidate.accessTokenType !== TokenType.Bearer) problems.push('access_token_type must be "bearer" (DPoP-bound)');
    if (!candidate.requirePushedAuthorizationRequests) problems.push('require_pushed_authorization_requests must be true');
    if (!candidate.dpopBoundAccessTokens) problems.push('dpop_bound_access_tokens must be true');
    if (!FAPI2_SIGNING_ALGORITHMS.has(candidate.idTokenSignedResponseAlg)) problems.push(`id_token_signed_response_alg must be ES256 or EdDSA, not ${candidate.idTokenSignedResponseAlg}`);
    if (candidate.tokenEndpointAuthSigningAlg !== null && !FAPI2_SIGNING_ALGORITHMS.has(candidate.tokenEndpointAuthSigningAlg)) {
      problems.push(`token_endpoint_auth_signing_alg must be PS256, ES256 or EdDSA, not ${candidate.tokenEndpointAuthSigningAlg}`);
    }
    return problems;
  }
}
