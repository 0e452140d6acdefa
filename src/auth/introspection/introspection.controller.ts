import { Body, Controller, Req } from '@nestjs/common';
import type { AuthenticatedClientRequest } from '../client-auth/client-authentication.guard.js';
import { OAuthParamsPipe } from '../oauth-params.pipe.js';
import { OAuthFormEndpoint } from '../token/oauth-form-endpoint.decorator.js';
import { TokenParamsDto } from '../revocation/token-params.dto.js';
import { TokenIntrospection, type IntrospectionResponse } from './token-introspection.js';

/** Token introspection (RFC 7662) for resource servers running apart from Latchkey; TokenIntrospection decides the answer. */
@Controller('introspect')
export class IntrospectionController {
  constructor(private readonly introspection: TokenIntrospection) {}

  @OAuthFormEndpoint({ json: true })
  introspect(@Req() request: AuthenticatedClientRequest, @Body(new OAuthParamsPipe(TokenParamsDto)) params: TokenParamsDto): Promise<IntrospectionResponse> {
    return this.introspection.introspect(request.client, params.token);
  }
}
