import { Body, Controller, Req } from '@nestjs/common';
import type { AuthenticatedClientRequest } from '../client-auth/client-authentication.guard.js';
import { OAuthFormEndpoint } from '../token/oauth-form-endpoint.decorator.js';
import { ParService, type PushedAuthorizationResponse } from './par.service.js';

/**
 * The pushed authorization request endpoint (RFC 9126 §2): the client sends its authorization
 * request here, authenticated as at the token endpoint, and gets a request_uri to send the browser with.
 */
@Controller('par')
export class ParController {
  constructor(private readonly par: ParService) {}

  /** §2.2: 201 Created with the request_uri; §2.3: errors as at the token endpoint. */
  @OAuthFormEndpoint({ json: true, status: 201 })
  push(@Req() request: AuthenticatedClientRequest, @Body() form: unknown): Promise<PushedAuthorizationResponse> {
    return this.par.push(request.client, form, request);
  }
}
