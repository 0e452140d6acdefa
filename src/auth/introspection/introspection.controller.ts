import { Body, Controller, Req } from '@nestjs/common';
import { DPOP_SCHEME } from '../../common/oauth.constants.js';
import { IntrospectionAccess } from '../../resource-servers/introspection-access.js';
import { TokenKind } from '../../tokens/token.entity.js';
import { TokensService } from '../../tokens/tokens.service.js';
import type { AuthenticatedClientRequest } from '../client-auth/client-authentication.guard.js';
import { InvalidRequestError, UnauthorizedClientError } from '../errors/oauth-error.js';
import { OAuthParamsPipe } from '../oauth-params.pipe.js';
import { OAuthFormEndpoint } from '../token/oauth-form-endpoint.decorator.js';
import { TokenParamsDto } from '../revocation/token-params.dto.js';

/** RFC 7662 §2.2 introspection response. */
export interface IntrospectionResponse {
  active: boolean;
  scope?: string;
  client_id?: string;
  sub?: string;
  exp?: number;
  iat?: number;
  token_type?: string;
  /** RFC 9449 §6.2: the key a DPoP-bound token is bound to, for the resource server to check the proof against. */
  cnf?: { jkt: string };
  /** RFC 7662 §2.2, RFC 8707: the resources the token is restricted to. */
  aud?: string[];
}

/**
 * Token introspection (RFC 7662) for resource servers running apart from Latchkey. The caller
 * authenticates as a client registered with the `tokens:introspect` scope (§4: the endpoint must
 * not be open to anyone); which tokens it may see is IntrospectionAccess's decision. Anything not
 * usable right now, or not the caller's to see, is `{ "active": false }`, nothing more.
 */
@Controller('introspect')
export class IntrospectionController {
  constructor(
    private readonly tokens: TokensService,
    private readonly access: IntrospectionAccess,
  ) {}

  @OAuthFormEndpoint({ json: true })
  async introspect(@Req() request: AuthenticatedClientRequest, @Body(new OAuthParamsPipe(TokenParamsDto)) params: TokenParamsDto): Promise<IntrospectionResponse> {
    const refusal = this.access.refusal(request.client);
    if (refusal) throw new UnauthorizedClientError(refusal);
    if (params.token === undefined) throw new InvalidRequestError('The token parameter is required');
    const token = await this.tokens.findByValue(params.token);
    if (!token || !this.tokens.isActive(token) || !(await this.access.maySee(request.client, token.audience))) return { active: false };
    return {
      active: true,
      scope: token.scope,
      client_id: token.clientId,
      ...(token.userId ? { sub: token.userId } : {}),
      exp: Math.floor(token.expiresAt.getTime() / 1000),
      iat: Math.floor(token.createdAt.getTime() / 1000),
      // RFC 7662 §2.2: the type of the token, as in the token response (RFC 6749 §7.1): bearer, mac or DPoP.
      ...(token.kind === TokenKind.Access ? { token_type: token.dpopJkt !== null ? DPOP_SCHEME : token.tokenType } : {}),
      ...(token.dpopJkt !== null ? { cnf: { jkt: token.dpopJkt } } : {}),
      ...(token.audience !== null ? { aud: token.audience.split(' ') } : {}),
    };
  }
}
