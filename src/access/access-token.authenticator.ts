import { Inject, Injectable } from '@nestjs/common';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { ClientsService } from '../clients/clients.service.js';
import { SecurityProfiles } from '../clients/security-profile.js';
import type { MacCredentials } from '../common/mac-signature.js';
import { DPOP_SCHEME, TokenType } from '../common/oauth.constants.js';
import { DpopProofVerifier } from '../dpop/dpop-proof.verifier.js';
import { SECRET_PREFIX } from '../common/secrets.js';
import { TokenKind, type Token } from '../tokens/token.entity.js';
import { TokensService } from '../tokens/tokens.service.js';
import type { AccessRefusal } from './access-denied.js';
import { MacProof, type SignedRequest } from './mac-proof.js';
import type { AccessScheme, Principal, TokenPrincipal } from './token-principal.js';

/**
 * What a request presents: a bearer token (RFC 6750 §2.1), a MAC-signed request
 * (draft-ietf-oauth-v2-http-mac-02 §3), or a DPoP-bound token with its proof (RFC 9449 §7.1).
 */
export type AccessCredentials =
  | { scheme: typeof TokenType.Bearer; token: string }
  | { scheme: typeof TokenType.Mac; credentials: MacCredentials; request: SignedRequest }
  | { scheme: typeof DPOP_SCHEME; token: string; proof: string | string[] | undefined; request: { method: string; path: string } };

const INVALID_TOKEN: AccessRefusal = { error: 'invalid_token', description: 'The access token is invalid, expired or revoked' };

/**
 * "Is this token usable, and for whom": decided here and nowhere else, for every protected route
 * (the data API, client registration and management). One indexed lookup by the token's hash; on
 * PostgreSQL a live access token is kept per instance and dropped when the tokens table notifies a
 * change (TokenStore, NotifiedCache), so a revoked token is refused by the very next request here and
 * within a notification's delivery on every other instance. What the token may
 * do on a given route (its scope, whether it must speak for a person) is the route's declared
 * requirement, checked by AccessTokenGuard.
 */
@Injectable()
export class AccessTokenAuthenticator {
  /** Latchkey's own APIs are the resource named by the issuer (RFC 8707; resource-servers.service.ts). */
  private readonly localResource: string;
  /** What a proof may be signed with here: before the token is found, its client is not known (SecurityProfiles.dpopAlgorithms). */
  private readonly dpopAlgorithms: readonly string[];

  constructor(
    private readonly tokens: TokensService,
    private readonly clients: ClientsService,
    private readonly mac: MacProof,
    private readonly dpop: DpopProofVerifier,
    profiles: SecurityProfiles,
    @Inject(appConfig.KEY) app: AppConfig,
  ) {
    this.localResource = app.issuer;
    this.dpopAlgorithms = profiles.dpopAlgorithms();
  }

  async authenticate(presented: AccessCredentials): Promise<Principal | AccessRefusal> {
    if (presented.scheme === TokenType.Bearer && presented.token.startsWith(SECRET_PREFIX.registrationToken)) {
      // RFC 7592 §3: a registration access token is a bearer token of its own kind, kept on the client.
      const client = await this.clients.findByRegistrationToken(presented.token);
      return client ? { kind: 'registration_access_token', clientId: client.id, client, scheme: TokenType.Bearer } : INVALID_TOKEN;
    }
    const token = await this.tokens.findByValue(presented.scheme === TokenType.Mac ? presented.credentials.id : presented.token);
    // Refresh tokens never open a protected resource (RFC 6749 §1.5).
    if (!token || token.kind !== TokenKind.Access || !this.tokens.isActive(token)) return INVALID_TOKEN;
    // RFC 8707 §2: a token restricted to other resources does not open this server's APIs.
    if (token.audience !== null && !token.audience.split(' ').includes(this.localResource)) {
      return { error: 'invalid_token', description: `This access token is for another resource (its audience); ask for one with resource=${this.localResource}` };
    }
    if (presented.scheme === DPOP_SCHEME) return this.dpopPrincipal(token, presented);
    if (presented.scheme === TokenType.Bearer) {
      // RFC 9449 §7.2: a DPoP-bound token presented as a bearer token is refused, whoever holds it.
      if (token.dpopJkt !== null) return { error: 'invalid_token', description: 'This access token is DPoP-bound: send it as "Authorization: DPoP <token>" with a DPoP proof', dpopBound: true };
      // A MAC token is only good with the signature of its key (draft-ietf-oauth-v2-http-mac-02 §1), never as a bearer token.
      return token.tokenType === TokenType.Bearer ? principalOf(token, TokenType.Bearer) : INVALID_TOKEN;
    }
    if (token.tokenType !== TokenType.Mac) {
      return { error: 'invalid_token', description: 'This access token is not a MAC token; send it as "Authorization: Bearer <token>"' };
    }
    const refusal = await this.mac.verify(token, presented.credentials, presented.request);
    return refusal ?? principalOf(token, TokenType.Mac);
  }

  /** RFC 9449 §7.1: a bound token, with a proof made with its key that covers this request and the token (ath). */
  private async dpopPrincipal(token: Token, presented: Extract<AccessCredentials, { scheme: typeof DPOP_SCHEME }>): Promise<TokenPrincipal | AccessRefusal> {
    if (token.dpopJkt === null) return { error: 'invalid_token', description: 'This access token is not DPoP-bound: send it as "Authorization: Bearer <token>"' };
    const result = await this.dpop.verify(presented.proof, { ...presented.request, accessToken: presented.token, boundTo: token.dpopJkt, algorithms: this.dpopAlgorithms });
    return 'jkt' in result ? principalOf(token, DPOP_SCHEME) : result;
  }
}

function principalOf(token: Token, scheme: AccessScheme): TokenPrincipal {
  return {
    kind: 'access_token',
    tokenId: token.id,
    clientId: token.clientId,
    userId: token.userId,
    scopes: new Set(token.scope === '' ? [] : token.scope.split(' ')),
    scheme,
  };
}
