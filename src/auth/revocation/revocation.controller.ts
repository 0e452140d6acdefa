import { Body, Controller, Req } from '@nestjs/common';
import { AuditService } from '../../audit/audit.service.js';
import { TokenKind } from '../../tokens/token.entity.js';
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
  constructor(
    private readonly tokens: TokensService,
    private readonly audit: AuditService,
  ) {}

  @OAuthFormEndpoint({ json: false })
  async revoke(@Req() request: AuthenticatedClientRequest, @Body(new OAuthParamsPipe(TokenParamsDto)) params: TokenParamsDto): Promise<void> {
    if (params.token === undefined) throw new InvalidRequestError('The token parameter is required');
    const token = await this.tokens.findByValue(params.token);
    if (!token || token.clientId !== request.client.id) return;
    if (token.kind === TokenKind.Refresh) await this.tokens.revokeFamily(token.familyId);
    else await this.tokens.revoke(token.id);
    // The token's id, never its value.
    await this.audit.record({ actor: `client:${request.client.id}`, action: 'token.revoked', subject: `token:${token.id}`, details: { kind: token.kind, ...(token.userId ? { user: token.userId } : {}) } });
  }
}
