import { Body, Controller, Req } from '@nestjs/common';
import type { AuthenticatedClientRequest } from '../client-auth/client-authentication.guard.js';
import { OAuthParamsPipe } from '../oauth-params.pipe.js';
import { OAuthFormEndpoint } from './oauth-form-endpoint.decorator.js';
import { TokenEndpointService } from './token-endpoint.service.js';
import { TokenRequestDto } from './token-request.dto.js';
import type { TokenResponse } from './token-response.js';

/** The token endpoint (RFC 6749 §3.2). */
@Controller('token')
export class TokenController {
  constructor(private readonly tokenEndpoint: TokenEndpointService) {}

  /** RFC 6749 §5.1: the response carries Cache-Control: no-store and Pragma: no-cache. */
  @OAuthFormEndpoint({ json: true })
  token(@Req() request: AuthenticatedClientRequest, @Body(new OAuthParamsPipe(TokenRequestDto)) params: TokenRequestDto): Promise<TokenResponse> {
    return this.tokenEndpoint.exchange(request.client, params, request);
  }
}
