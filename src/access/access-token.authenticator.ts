import { Injectable } from '@nestjs/common';
import { ClientsService } from '../clients/clients.service.js';
import type { MacCredentials } from '../common/mac-signature.js';
import { TokenType } from '../common/oauth.constants.js';
import { SECRET_PREFIX } from '../common/secrets.js';
import { TokenKind, type Token } from '../tokens/token.entity.js';
import { TokensService } from '../tokens/tokens.service.js';
import type { AccessRefusal } from './access-denied.js';
import { MacProof, type SignedRequest } from './mac-proof.js';
import type { Principal, TokenPrincipal } from './token-principal.js';

/** What a request presents: a bearer token (RFC 6750 §2.1), or a MAC-signed request (draft-ietf-oauth-v2-http-mac-02 §3). */
export type AccessCredentials = { scheme: typeof TokenType.Bearer; token: string } | { scheme: typeof TokenType.Mac; credentials: MacCredentials; request: SignedRequest };

const INVALID_TOKEN: AccessRefusal = { error: 'invalid_token', description: 'The access token is invalid, expired or revoked' };

/**
 * "Is this token usable, and for whom": decided here and nowhere else, for every protected route
 * (the data API, client registration and management). One indexed lookup by the token's hash, no
 * cache, so a revoked token is refused by the very next request on any instance. What the token may
 * do on a given route (its scope, whether it must speak for a person) is the route's declared
 * requirement, checked by AccessTokenGuard.
 */
@Injectable()
export class AccessTokenAuthenticator {
  constructor(
    private readonly tokens: TokensService,
    private readonly clients: ClientsService,
    private readonly mac: MacProof,
  ) {}

  async authenticate(presented: AccessCredentials): Promise<Principal | AccessRefusal> {
    if (presented.scheme === TokenType.Bearer && presented.token.startsWith(SECRET_PREFIX.registrationToken)) {
      // RFC 7592 §3: a registration access token is a bearer token of its own kind, kept on the client.
      const client = await this.clients.findByRegistrationToken(presented.token);
      return client ? { kind: 'registration_access_token', clientId: client.id, client, scheme: TokenType.Bearer } : INVALID_TOKEN;
    }
    const token = await this.tokens.findByValue(presented.scheme === TokenType.Bearer ? presented.token : presented.credentials.id);
    // Refresh tokens never open a protected resource (RFC 6749 §1.5).
    if (!token || token.kind !== TokenKind.Access || !this.tokens.isActive(token)) return INVALID_TOKEN;
    if (presented.scheme === TokenType.Bearer) {
      // A MAC token is only good with the signature of its key (draft-ietf-oauth-v2-http-mac-02 §1), never as a bearer token.
      return token.tokenType === TokenType.Bearer ? principalOf(token) : INVALID_TOKEN;
    }
    if (token.tokenType !== TokenType.Mac) {
      return { error: 'invalid_token', description: 'This access token is not a MAC token; send it as "Authorization: Bearer <token>"' };
    }
    const refusal = await this.mac.verify(token, presented.credentials, presented.request);
    return refusal ?? principalOf(token);
  }
}

function principalOf(token: Token): TokenPrincipal {
  return {
    kind: 'access_token',
    tokenId: token.id,
    clientId: token.clientId,
    userId: token.userId,
    scopes: new Set(token.scope === '' ? [] : token.scope.split(' ')),
    scheme: token.tokenType,
  };
}
