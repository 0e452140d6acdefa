import { Injectable } from '@nestjs/common';
import type { Client } from '../../clients/client.entity.js';
import type { AuthorizationCode } from '../../codes/authorization-code.entity.js';
import { CodesService } from '../../codes/codes.service.js';
import { Clock } from '../../common/clock.js';
import { GrantType } from '../../common/oauth.constants.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { IdTokenIssuer } from '../../openid/id-token.issuer.js';
import { holdsOpenId } from '../../openid/openid-scope.js';
import { splitScope } from '../../common/scope.js';
import { TokensService, type IssuedTokens, type MintedTokens } from '../../tokens/tokens.service.js';
import { InvalidGrantError, InvalidRequestError, OAuthError as OAuthErrorClass, UnauthorizedClientError, type OAuthError } from '../errors/oauth-error.js';
import { ResourceIndicators, splitResources } from '../resource-indicators.js';
import type { TokenRequestDto } from '../token/token-request.dto.js';
import { JwtAccessTokens } from '../token/jwt-access-tokens.js';
import { toTokenResponse, type TokenResponse } from '../token/token-response.js';
import type { GrantContext, GrantHandler } from './grant-handler.js';
import { GrantSignInLevel, SIGN_IN_BELOW_FLOOR } from './grant-sign-in-level.js';
import { verifyS256 } from './pkce.js';
import { parseAmr } from '../../common/authentication-context.js';

/** RFC 6749 §4.1.3 and RFC 7636 §4.5. */
export interface AuthorizationCodeParameters {
  code: string;
  redirectUri?: string;
  codeVerifier?: string;
  /** RFC 8707 §2.2: narrows the resources of the authorization request. */
  resources?: string[];
}

type Redemption = { kind: 'replayed' } | { kind: 'refused'; error: OAuthError } | { kind: 'issued'; tokens: IssuedTokens };

/** RFC 6749 §4.1.3 / §4.1.4 with PKCE (RFC 7636 §4.5, §4.6). */
@Injectable()
export class AuthorizationCodeGrant implements GrantHandler<AuthorizationCodeParameters> {
  readonly grantType = GrantType.AuthorizationCode;

  constructor(
    private readonly codes: CodesService,
    private readonly tokens: TokensService,
    private readonly clock: Clock,
    private readonly metrics: MetricsService,
    private readonly idTokens: IdTokenIssuer,
    private readonly resources: ResourceIndicators,
    private readonly jwtAccessTokens: JwtAccessTokens,
    private readonly signInLevel: GrantSignInLevel,
  ) {}

  parameters(form: TokenRequestDto): AuthorizationCodeParameters {
    if (form.code === undefined) throw new InvalidRequestError('The code parameter is required');
    return { code: form.code, redirectUri: form.redirect_uri, codeVerifier: form.code_verifier, resources: this.resources.parse(form.resource) };
  }

  async handle(request: AuthorizationCodeParameters, { client, dpopJkt }: GrantContext): Promise<TokenResponse> {
    const code = await this.codes.findByCode(request.code);
    if (!code) throw new InvalidGrantError('The authorization code is invalid, expired or already used');
    // Before anything is written: a code of an OpenID authentication is redeemed only if its ID token can be issued.
    const idTokenRefusal = holdsOpenId(code.scope) ? this.idTokens.refusal(client) : undefined;
    if (idTokenRefusal) throw new UnauthorizedClientError(idTokenRefusal);
    const granted = splitResources(code.resources);
    // Worked out before the code is burned, reported after: an unknown or wider resource is the client's mistake, not a replay.
    const target = await this.resources.narrow(request.resources, granted).then(
      (audience) => ({ audience, error: undefined }),
      (error: unknown) => {
        if (error instanceof OAuthErrorClass) return { audience: undefined, error };
        throw error;
      },
    );

    // Minted before the transaction (a JWT access token is signed off the event loop), stored inside it.
    const minted = await this.tokens.mint({
      familyId: code.id,
      clientId: client.id,
      userId: code.userId,
      scope: code.scope,
      refreshScope: client.grantTypes.includes(GrantType.RefreshToken) ? code.scope : undefined,
      tokenType: client.accessTokenType,
      authTime: code.authTime,
      sid: code.sid,
      amr: code.amr,
      dpop: dpopJkt === undefined ? undefined : { jkt: dpopJkt, bindRefreshToken: client.isPublic },
      ...this.jwtAccessTokens.restrictedTo(target.audience, client),
      refreshAudience: granted ?? undefined,
    });

    // The code is burned whatever the checks say, atomically with the tokens it yields: exactly one
    // redemption wins even across instances, and a failed check still leaves the code dead, so a
    // stolen code cannot be retried with guessed verifiers (fosite flow_authorize_code_token.go).
    const error = this.checkBinding(code, client, request, dpopJkt) ?? target.error ?? (await this.belowFloor(code, client));
    const redemption = await this.redeem(code, minted, error);

    switch (redemption.kind) {
      case 'replayed':
        this.metrics.codeReplayed();
        // RFC 6749 §4.1.2: a code used twice SHOULD revoke every token issued from it.
        await this.tokens.revokeFamily(code.id, { actor: `client:${client.id}`, reason: 'authorization_code_replayed' });
        throw new InvalidGrantError('The authorization code is invalid, expired or already used');
      case 'refused':
        throw redemption.error;
      case 'issued':
        this.metrics.codeRedeemed();
        return toTokenResponse(redemption.tokens, await this.idToken(code, client, redemption.tokens));
    }
  }

  /** Burns the code; stores the tokens in the same statement (PostgreSQL) or transaction (SQLite) when no check failed. */
  private async redeem(code: AuthorizationCode, minted: MintedTokens, error: OAuthError | undefined): Promise<Redemption> {
    if (error) return (await this.codes.consume(code.id)) ? { kind: 'refused', error } : { kind: 'replayed' };
    const tokens = await this.tokens.storeAfter(this.codes.consumeGate(code.id), minted);
    return tokens ? { kind: 'issued', tokens } : { kind: 'replayed' };
  }

  /** OpenID Connect Core §3.1.3.3: an authentication request (scope openid) gets an ID token with its nonce. */
  private async idToken(code: AuthorizationCode, client: Client, tokens: IssuedTokens): Promise<string | undefined> {
    if (!holdsOpenId(code.scope)) return undefined;
    return this.idTokens.issue({ client, userId: code.userId, authTime: code.authTime, amr: parseAmr(code.amr), sid: code.sid, nonce: code.nonce, accessToken: tokens.accessToken, scope: splitScope(tokens.scope) });
  }

  /** The authorization endpoint held the sign-in to the level; a floor raised or a second factor required of the person since then holds for the tokens too. */
  private async belowFloor(code: AuthorizationCode, client: Client): Promise<OAuthError | undefined> {
    return (await this.signInLevel.stillMeets(client, code.userId, code.amr)) ? undefined : new InvalidGrantError(SIGN_IN_BELOW_FLOOR);
  }

  /** The checks of RFC 6749 §4.1.3 and RFC 7636 §4.6; returns the error, or undefined when the code may be redeemed. */
  private checkBinding(code: AuthorizationCode, client: Client, request: AuthorizationCodeParameters, dpopJkt: string | undefined): OAuthError | undefined {
    if (code.clientId !== client.id) return new InvalidGrantError('The authorization code was issued to another client');
    if (code.expiresAt.getTime() <= this.clock.now().getTime()) return new InvalidGrantError('The authorization code has expired');
    // §4.1.3: redirect_uri is REQUIRED if it was included in the authorization request, and the values MUST be identical.
    if (code.redirectUriInRequest && request.redirectUri === undefined) {
      return new InvalidGrantError('redirect_uri is required because the authorization request included it');
    }
    if (request.redirectUri !== undefined && request.redirectUri !== code.redirectUri) {
      return new InvalidGrantError('redirect_uri does not match the authorization request');
    }
    if (code.codeChallenge !== null) {
      if (request.codeVerifier === undefined) return new InvalidGrantError('code_verifier is required (PKCE, RFC 7636 §4.5)');
      if (!verifyS256(request.codeVerifier, code.codeChallenge)) return new InvalidGrantError('code_verifier does not match the code_challenge');
    } else if (request.codeVerifier !== undefined) {
      // RFC 9700 §2.1.1 / §4.8.2: a verifier for a code issued without a challenge is a PKCE downgrade attempt.
      return new InvalidGrantError('code_verifier was sent but the authorization request had no code_challenge');
    }
    // RFC 9449 §10: a code bound to a DPoP key is redeemed only with a proof made with that key.
    if (code.dpopJkt !== null && dpopJkt !== code.dpopJkt) return new InvalidGrantError('The authorization code is bound to a DPoP key (dpop_jkt): send a DPoP proof made with it');
    return undefined;
  }
}
