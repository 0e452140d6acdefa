import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy as HttpBearerStrategy } from 'passport-http-bearer';
import { Strategy, TokenType } from '../../common/oauth.constants.js';
import { TokenKind } from '../../tokens/token.entity.js';
import { TokensService } from '../../tokens/tokens.service.js';
import { BEARER_REALM, type TokenPrincipal } from './token-principal.js';

/**
 * passport-http-bearer also takes a token from the body and the query, and splits the header on
 * exactly one space: hand it the Authorization header alone (RFC 6750 §2.1), with 1*SP folded.
 */
class HeaderOnlyBearerStrategy extends HttpBearerStrategy<(token: string, done: (error: unknown, user?: unknown) => void) => void> {
  override authenticate(request: { headers: { authorization?: string } }, options?: object): void {
    const authorization = request.headers.authorization?.replace(/^bearer +/i, 'Bearer ');
    super.authenticate({ headers: authorization === undefined ? {} : { authorization } } as never, options);
  }
}

/**
 * RFC 6750 bearer tokens through passport-http-bearer. A check is one indexed lookup by the
 * token's hash, with no cache: a revoked token is refused by the very next request.
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(HeaderOnlyBearerStrategy, Strategy.Bearer) {
  constructor(private readonly tokens: TokensService) {
    super({ realm: BEARER_REALM });
  }

  async validate(value: string): Promise<TokenPrincipal | false> {
    const token = await this.tokens.findByValue(value);
    // Refresh tokens never open the API; client-credentials tokens (no user) own no items; a MAC
    // token is only good with the signature of its key (draft-ietf-oauth-v2-http-mac), never as a bearer token.
    if (!token || token.kind !== TokenKind.Access || token.userId === null || token.tokenType !== TokenType.Bearer || !this.tokens.isActive(token)) return false;
    return { tokenId: token.id, userId: token.userId, clientId: token.clientId, scopes: new Set(token.scope === '' ? [] : token.scope.split(' ')), scheme: TokenType.Bearer };
  }
}
