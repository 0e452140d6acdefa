import { Injectable } from '@nestjs/common';
import type { Client } from '../../clients/client.entity.js';
import { parseAmr } from '../../common/authentication-context.js';
import { GrantType } from '../../common/oauth.constants.js';
import { splitScope } from '../../common/scope.js';
import type { DeviceAuthorization } from '../../device-codes/device-authorization.entity.js';
import { DeviceAuthorizations } from '../../device-codes/device-authorizations.service.js';
import { IdTokenIssuer } from '../../openid/id-token.issuer.js';
import { holdsOpenId } from '../../openid/openid-scope.js';
import { TokensService, type IssuedTokens } from '../../tokens/tokens.service.js';
import { AuthorizationPendingError, DeviceAccessDeniedError, ExpiredTokenError, InvalidGrantError, InvalidRequestError, SlowDownError, UnauthorizedClientError } from '../errors/oauth-error.js';
import type { TokenRequestDto } from '../token/token-request.dto.js';
import { toTokenResponse, type TokenResponse } from '../token/token-response.js';
import type { GrantContext, GrantHandler } from './grant-handler.js';
import { GroupAccessRule, NOT_IN_REQUIRED_GROUP } from '../../groups/group-access-rule.js';
import { GrantSignInLevel, SIGN_IN_BELOW_FLOOR } from './grant-sign-in-level.js';

/** RFC 8628 §3.4. */
export interface DeviceCodeParameters {
  deviceCode: string;
}

/**
 * RFC 8628 §3.4, §3.5: the device polls with its device_code until the person has decided. An
 * approved request is redeemed once: the UPDATE that marks it redeemed and the INSERT of its tokens
 * commit together (TokensService.storeAfter), so of any number of polls on any instances exactly
 * one gets the tokens, and the others invalid_grant.
 */
@Injectable()
export class DeviceCodeGrant implements GrantHandler<DeviceCodeParameters> {
  readonly grantType = GrantType.DeviceCode;

  constructor(
    private readonly devices: DeviceAuthorizations,
    private readonly tokens: TokensService,
    private readonly idTokens: IdTokenIssuer,
    private readonly signInLevel: GrantSignInLevel,
    private readonly groupAccess: GroupAccessRule,
  ) {}

  parameters(form: TokenRequestDto): DeviceCodeParameters {
    if (form.device_code === undefined) throw new InvalidRequestError('The device_code parameter is required');
    return { deviceCode: form.device_code };
  }

  async handle({ deviceCode }: DeviceCodeParameters, { client, dpopJkt }: GrantContext): Promise<TokenResponse> {
    const poll = await this.devices.poll(deviceCode, client.id);
    switch (poll.kind) {
      case 'unknown':
        throw new InvalidGrantError('The device_code is invalid');
      case 'redeemed':
        // §3.5 leaves a used device_code to RFC 6749: it is no longer valid. Unlike an authorization
        // code it never passed through a browser, so a second poll is the device's own and revokes nothing.
        throw new InvalidGrantError('The device_code has been used already');
      case 'expired':
        throw new ExpiredTokenError('The device_code has expired: start again with a new device authorization request');
      case 'denied':
        throw new DeviceAccessDeniedError('The person denied the request, or withdrew it before the device picked it up');
      case 'slow_down':
        throw new SlowDownError('Polled faster than the interval: wait 5 seconds longer between polls from now on');
      case 'pending':
        throw new AuthorizationPendingError('The person has not yet approved the request');
      case 'approved':
        return this.redeem(poll.authorization, client, dpopJkt);
    }
  }

  private async redeem(authorization: DeviceAuthorization, client: Client, dpopJkt: string | undefined): Promise<TokenResponse> {
    const openId = holdsOpenId(authorization.scope);
    // Before anything is written: a request for an OpenID authentication is redeemed only if its ID token can be issued.
    const idTokenRefusal = openId ? this.idTokens.refusal(client) : undefined;
    if (idTokenRefusal) throw new UnauthorizedClientError(idTokenRefusal);
    const userId = authorization.userId!;
    // The verification page held the approval to the level then (DeviceSignInLevel); a floor raised or a
    // second factor required of the person since then holds for the tokens too. The device starts again.
    if (!(await this.signInLevel.stillMeets(client, userId, authorization.amr))) throw new InvalidGrantError(SIGN_IN_BELOW_FLOOR);
    // Issue 46: the client's group rule (GroupAccessRule), which the device's approval page does not ask; no query unless it requires groups.
    if (!(await this.groupAccess.allows(client, userId))) throw new InvalidGrantError(NOT_IN_REQUIRED_GROUP);
    const minted = await this.tokens.mint({
      familyId: authorization.id,
      clientId: client.id,
      userId,
      scope: authorization.scope,
      refreshScope: client.grantTypes.includes(GrantType.RefreshToken) ? authorization.scope : undefined,
      tokenType: client.accessTokenType,
      authTime: authorization.authTime,
      // Always the approving session's: its end revokes what the device obtained, as for the code flow's grants.
      sid: authorization.sid,
      amr: authorization.amr,
      // RFC 9449 §5: a proof with the poll binds the tokens; a public client's refresh token too (§5.0).
      dpop: dpopJkt === undefined ? undefined : { jkt: dpopJkt, bindRefreshToken: client.isPublic },
    });
    const issued = await this.tokens.storeAfter(this.devices.redeemGate(authorization.id), minted);
    if (!issued) throw new InvalidGrantError('The device_code has been used already');
    return toTokenResponse(issued, openId ? await this.idToken(authorization, client, userId, issued) : undefined);
  }

  /** OpenID Connect Core §3.1.3.3 as for the code flow: who approved, when and how they signed in, in which session (no nonce: §3.1 has none). */
  private idToken(authorization: DeviceAuthorization, client: Client, userId: string, tokens: IssuedTokens): Promise<string> {
    return this.idTokens.issue({ client, userId, authTime: authorization.authTime, amr: parseAmr(authorization.amr), sid: authorization.sid, accessToken: tokens.accessToken, scope: splitScope(tokens.scope) });
  }
}
