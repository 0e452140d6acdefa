import { Inject, Injectable } from '@nestjs/common';
import type { Client } from '../../clients/client.entity.js';
import { SecurityProfiles } from '../../clients/security-profile.js';
import { GrantType } from '../../common/oauth.constants.js';
import { formatScope, isSubset, parseScope, splitScope } from '../../common/scope.js';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { DeviceAuthorizations } from '../../device-codes/device-authorizations.service.js';
import { OPENID_SCOPE, ScopeCatalog } from '../../scopes/scope-catalog.js';
import { InvalidScopeError, UnauthorizedClientError } from '../errors/oauth-error.js';

/** The path of the verification page (RFC 8628 §3.2 verification_uri), served by device/. */
export const DEVICE_VERIFICATION_PATH = '/device';

/** RFC 8628 §3.2. */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/**
 * RFC 8628 §3.1, §3.2: a device asks to be authorized. The client is authenticated as at the token
 * endpoint (a public client names itself, §3.1 expects those) and must be registered for the
 * device_code grant; its scope is checked as at the authorization endpoint.
 */
@Injectable()
export class DeviceAuthorizationService {
  constructor(
    private readonly devices: DeviceAuthorizations,
    private readonly scopes: ScopeCatalog,
    private readonly profiles: SecurityProfiles,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
  ) {}

  async start(client: Client, form: unknown): Promise<DeviceAuthorizationResponse> {
    if (!client.grantTypes.includes(GrantType.DeviceCode)) throw new UnauthorizedClientError(`This client is not registered for the ${GrantType.DeviceCode} grant`);
    // FAPI 2.0 §5.3.2.1 allows the code flow only: a client held to it gets no device codes, whatever it was registered for before.
    if (this.profiles.applies(client)) throw new UnauthorizedClientError('The FAPI 2.0 Security Profile this client is held to does not allow the device authorization grant');
    const scope = this.scope(client, (form as Record<string, unknown> | undefined)?.scope);
    const started = await this.devices.start(client.id, formatScope(scope));
    const verificationUri = `${this.app.issuer}${DEVICE_VERIFICATION_PATH}`;
    return {
      device_code: started.deviceCode,
      user_code: started.userCode,
      verification_uri: verificationUri,
      // §3.3.1: the code in the URI saves typing it; the page still asks the person to confirm it (§5.4).
      verification_uri_complete: `${verificationUri}?user_code=${started.userCode}`,
      expires_in: started.expiresIn,
      interval: started.interval,
    };
  }

  /**
   * RFC 6749 §3.3 as at /authorize: the data scopes the client registered and OpenID Connect's; the
   * registered data scopes when none is asked. Unknown scopes of an OpenID request are ignored
   * (Core §3.1.2.1), a known one the client may not have is refused.
   */
  private scope(client: Client, value: unknown): string[] {
    const registered = splitScope(client.scope).filter((s) => this.scopes.isDataScope(s));
    if (value === undefined || value === '') return registered;
    const parsed = typeof value === 'string' ? parseScope(value) : undefined;
    if (parsed === undefined) throw new InvalidScopeError('The scope parameter is malformed');
    const scope = parsed.includes(OPENID_SCOPE) ? parsed.filter((s) => this.scopes.isKnown(s)) : parsed;
    if (!isSubset(scope, [...registered, ...this.scopes.identityScopes()])) throw new InvalidScopeError('The requested scope is not allowed for this client');
    return scope;
  }
}
