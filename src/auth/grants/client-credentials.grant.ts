import { Injectable } from '@nestjs/common';
import { uuidv7 } from '../../common/random.js';
import { GrantType } from '../../common/oauth.constants.js';
import { formatScope, isSubset, parseScope, splitScope } from '../../common/scope.js';
import { TokensService } from '../../tokens/tokens.service.js';
import { InvalidScopeError, UnauthorizedClientError } from '../errors/oauth-error.js';
import { ResourceIndicators } from '../resource-indicators.js';
import type { TokenRequestDto } from '../token/token-request.dto.js';
import { JwtAccessTokens } from '../token/jwt-access-tokens.js';
import { toTokenResponse, type TokenResponse } from '../token/token-response.js';
import type { GrantContext, GrantHandler } from './grant-handler.js';

/** RFC 6749 §4.4.2. */
export interface ClientCredentialsParameters {
  scope?: string;
  /** RFC 8707 §2: the resources the token is for. */
  resources?: string[];
}

/**
 * RFC 6749 §4.4: a confidential client asks for a token for itself. The token has no resource
 * owner (the data API refuses it) and no refresh token comes with it (§4.4.3).
 */
@Injectable()
export class ClientCredentialsGrant implements GrantHandler<ClientCredentialsParameters> {
  readonly grantType = GrantType.ClientCredentials;

  constructor(
    private readonly tokens: TokensService,
    private readonly resources: ResourceIndicators,
    private readonly jwtAccessTokens: JwtAccessTokens,
  ) {}

  parameters(form: TokenRequestDto): ClientCredentialsParameters {
    return { scope: form.scope, resources: this.resources.parse(form.resource) };
  }

  async handle(request: ClientCredentialsParameters, { client, dpopJkt }: GrantContext): Promise<TokenResponse> {
    // §4.4.2: only confidential clients; a public one has proved nothing about itself.
    if (client.isPublic) throw new UnauthorizedClientError('Only a confidential client may use the client_credentials grant');
    const registered = splitScope(client.scope);
    const requested = request.scope === undefined ? registered : parseScope(request.scope);
    if (requested === undefined) throw new InvalidScopeError('The scope parameter is malformed');
    if (!isSubset(requested, registered)) throw new InvalidScopeError('The requested scope is not registered for this client');
    const audience = request.resources === undefined ? undefined : await this.resources.resolve(request.resources);
    const issued = await this.tokens.issue({
      familyId: uuidv7(),
      clientId: client.id,
      userId: null,
      scope: formatScope(requested),
      tokenType: client.accessTokenType,
      dpop: dpopJkt === undefined ? undefined : { jkt: dpopJkt, bindRefreshToken: false },
      ...this.jwtAccessTokens.restrictedTo(audience, client),
    });
    return toTokenResponse(issued);
  }
}
