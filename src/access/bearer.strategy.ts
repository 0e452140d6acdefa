import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy as HttpBearerStrategy } from 'passport-http-bearer';
import { Strategy, TokenType } from '../common/oauth.constants.js';
import { AccessDenied } from './access-denied.js';
import { AccessTokenAuthenticator } from './access-token.authenticator.js';
import { BEARER_REALM, type Principal } from './token-principal.js';

/**
 * passport-http-bearer also takes a token from the body and the query, and splits the header on
 * exactly one space: hand it the Authorization header alone (RFC 6750 §2.1), with 1*SP folded, and
 * only when its scheme is Bearer (another scheme is no bearer token: the bare challenge).
 */
class HeaderOnlyBearerStrategy extends HttpBearerStrategy<(token: string, done: (error: unknown, user?: unknown) => void) => void> {
  override authenticate(request: { headers: { authorization?: string } }, options?: object): void {
    const header = request.headers.authorization;
    const authorization = header !== undefined && /^bearer +/i.test(header) ? header.replace(/^bearer +/i, 'Bearer ') : undefined;
    super.authenticate({ headers: authorization === undefined ? {} : { authorization } } as never, options);
  }
}

/** RFC 6750 bearer tokens through passport-http-bearer; whom a token speaks for is AccessTokenAuthenticator's decision. */
@Injectable()
export class BearerStrategy extends PassportStrategy(HeaderOnlyBearerStrategy, Strategy.Bearer) {
  constructor(private readonly authenticator: AccessTokenAuthenticator) {
    super({ realm: BEARER_REALM });
  }

  async validate(token: string): Promise<Principal> {
    const result = await this.authenticator.authenticate({ scheme: TokenType.Bearer, token });
    // Thrown, not passed to passport as a failure: the refusal keeps its type instead of becoming a challenge string.
    if ('error' in result) throw new AccessDenied(result, TokenType.Bearer);
    return result;
  }
}
