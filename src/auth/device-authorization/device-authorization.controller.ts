import { Body, Controller, Req } from '@nestjs/common';
import type { AuthenticatedClientRequest } from '../client-auth/client-authentication.guard.js';
import { OAuthFormEndpoint } from '../token/oauth-form-endpoint.decorator.js';
import { DeviceAuthorizationService, type DeviceAuthorizationResponse } from './device-authorization.service.js';

/**
 * The device authorization endpoint (RFC 8628 §3.1): a device without a browser gets a device_code
 * to poll the token endpoint with and a user_code for the person. Authenticated as at /token;
 * §3.2: 200 with JSON, errors as at the token endpoint (RFC 6749 §5.2).
 */
@Controller('device_authorization')
export class DeviceAuthorizationController {
  constructor(private readonly deviceAuthorization: DeviceAuthorizationService) {}

  @OAuthFormEndpoint({ json: true })
  start(@Req() request: AuthenticatedClientRequest, @Body() form: unknown): Promise<DeviceAuthorizationResponse> {
    return this.deviceAuthorization.start(request.client, form);
  }
}
