import { Inject, Injectable } from '@nestjs/common';
import type { Client } from '../../clients/client.entity.js';
import { InvalidRequestError, UnauthorizedClientError, UnsupportedGrantTypeError } from '../errors/oauth-error.js';
import { GRANT_HANDLERS, type GrantHandler } from '../grants/grant-handler.js';
import type { TokenRequestDto } from './token-request.dto.js';
import type { TokenResponse } from './token-response.js';

/**
 * POST /token dispatcher: finds the handler for grant_type and refuses unknown grants and grants the
 * client is not registered for before any handler runs (RFC 6749 §5.2).
 */
@Injectable()
export class TokenEndpointService {
  private readonly handlers: ReadonlyMap<string, GrantHandler>;

  constructor(@Inject(GRANT_HANDLERS) handlers: GrantHandler[]) {
    this.handlers = new Map(handlers.map((h) => [h.grantType, h]));
  }

  get supportedGrantTypes(): string[] {
    return [...this.handlers.keys()];
  }

  exchange(client: Client, request: TokenRequestDto): Promise<TokenResponse> {
    if (request.grant_type === undefined) throw new InvalidRequestError('The grant_type parameter is required');
    const handler = this.handlers.get(request.grant_type);
    if (!handler) throw new UnsupportedGrantTypeError(`The grant type "${request.grant_type}" is not supported`);
    if (!client.grantTypes.includes(handler.grantType)) {
      throw new UnauthorizedClientError(`This client is not registered for the ${handler.grantType} grant`);
    }
    return handler.handle(request, client);
  }
}
