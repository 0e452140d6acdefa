import { Body, Controller, Req } from '@nestjs/common';
import { TokensService } from '../../tokens/tokens.service.js';
import type { AuthenticatedClientRequest } from '../client-auth/client-authentication.guard.js';
import { InvalidRequestError } from '../errors/oauth-error.js';
import { OAuthParamsPipe } from '../oauth-params.pipe.js';
import { OAuthFormEndpoint } from '../token/oauth-form-endpoint.decorator.js';
import { TokenParamsDto } from './token-params.dto.js';

/**
 * Token revocation (RFC 7009). A client revokes its own access or refresh tokens; revoking a
 * refresh token ends the whole grant, access tokens included (§2.1). Unknown, expired or already
 * revoked tokens, and tokens of other clients, answer 200 like a success (§2.2): the answer
 * reveals nothing about a token the caller does not own.
 */
@Controller('revoke')
export class RevocationController {
  constructor(private readonly tokens: TokensService) {}

  @OAuthFormEndpoint({ json: false })
  async revoke(@Req() request: AuthenticatedClientRequest, @Body(new OAuthParamsPipe(TokenParamsDto)) params: TokenParamsDto): Promise<void> {
    if (params.token === undefined) throw new InvalidRequestError('The token parameter is required');
    const token = await this.tokens.findByValue(params.token);
    if (!token || token.clientId !== request.client.id) return;
    await this.tokens.revokeForClient(token, request.client.id);
  }
}
