import { AdminRolesService } from '../../admin/admin-roles.service.js';
import { Injectable } from '@nestjs/common';
import { GrantType } from '../../common/oauth.constants.js';
import { formatScope, isSubset, parseScope, splitScope } from '../../common/scope.js';
import type { Client } from '../../clients/client.entity.js';
import { RefreshRepeats } from '../../tokens/refresh-repeats.js';
import { TokenKind, type Token } from '../../tokens/token.entity.js';
import { IdTokenIssuer } from '../../openid/id-token.issuer.js';
import { holdsOpenId } from '../../openid/openid-scope.js';
import { OPENID_SCOPE } from '../../scopes/scope-catalog.js';
import { TokensService, type IssuedTokens } from '../../tokens/tokens.service.js';
import { InvalidGrantError, InvalidRequestError, InvalidScopeError, UnauthorizedClientError } from '../errors/oauth-error.js';
import { ResourceIndicators, splitResources } from '../resource-indicators.js';
import type { TokenRequestDto } from '../token/token-request.dto.js';
import { JwtAccessTokens } from '../token/jwt-access-tokens.js';
import { toTokenResponse, type TokenResponse } from '../token/token-response.js';
import type { GrantContext, GrantHandler } from './grant-handler.js';
import { GrantSignInLevel, SIGN_IN_BELOW_FLOOR } from './grant-sign-in-level.js';
import { parseAmr } from '../../common/authentication-context.js';
import { GroupAccessRule, NOT_IN_REQUIRED_GROUP } from '../../groups/group-access-rule.js';

/** RFC 6749 §6. */
export interface RefreshTokenParameters {
  refreshToken: string;
  scope?: string;
  /** RFC 8707 §2.2: narrows the resources the grant named. */
  resources?: string[];
}

const INVALID = 'The refresh token is invalid, expired or revoked';

/** What a repeat of a refresh request must ask as the first use did (RefreshRepeats): scope, resources and DPoP key as sent. */
function fingerprint(request: RefreshTokenParameters, dpopJkt: string | undefined): string {
  return JSON.stringify([request.scope ?? null, request.resources ?? null, dpopJkt ?? null]);
}

/**
 * RFC 6749 §6 with refresh token rotation (RFC 9700 §4.14.2): every use returns a new refresh
 * token and kills the old one; presenting a dead one again revokes the whole family, except that
 * the same request from the same client within REFRESH_REUSE_GRACE_SECONDS, while the successor
 * is unused, gets the first use's answer again (RefreshRepeats): one chain, whatever the number of
 * threads or instances.
 */
@Injectable()
export class RefreshTokenGrant implements GrantHandler<RefreshTokenParameters> {
  readonly grantType = GrantType.RefreshToken;

  constructor(
    private readonly tokens: TokensService,
    private readonly idTokens: IdTokenIssuer,
    private readonly resources: ResourceIndicators,
    private readonly jwtAccessTokens: JwtAccessTokens,
    private readonly repeats: RefreshRepeats,
    private readonly signInLevel: GrantSignInLevel,
    private readonly groupAccess: GroupAccessRule,
    private readonly adminRoles: AdminRolesService,
  ) {}

  parameters(form: TokenRequestDto): RefreshTokenParameters {
    if (form.refresh_token === undefined) throw new InvalidRequestError('The refresh_token parameter is required');
    return { refreshToken: form.refresh_token, scope: form.scope, resources: this.resources.parse(form.resource) };
  }

  async handle(request: RefreshTokenParameters, { client, dpopJkt }: GrantContext): Promise<TokenResponse> {
    const token = await this.tokens.findByValue(request.refreshToken);
    if (!token || token.kind !== TokenKind.Refresh || token.clientId !== client.id) throw new InvalidGrantError(INVALID);

    // Reuse is detected before anything else about the request is judged: a replayed token must
    // revoke its family whatever scope it asks for (RFC 9700 §4.14.2), unless it repeats the first use.
    if (token.consumedAt !== null && token.revokedAt === null) return this.repeatOrRevoke(token, request, client, dpopJkt);
    if (!this.tokens.isActive(token)) throw new InvalidGrantError(INVALID);
    // RFC 9449 §5: a public client's refresh token bound to a DPoP key is redeemed only with a proof made with that key.
    if (token.dpopJkt !== null && dpopJkt !== token.dpopJkt) throw new InvalidGrantError('This refresh token is bound to a DPoP key: send a DPoP proof made with it');
    // The grant's sign-in against the client's floor and the person's requirement as they are now; refused, not revoked (GrantSignInLevel).
    if (token.userId !== null && !(await this.signInLevel.stillMeets(client, token.userId, token.amr))) throw new InvalidGrantError(SIGN_IN_BELOW_FLOOR);
    // Issue 46: the client's group rule as it is now, the one the sign-in was held to (GroupAccessRule); a person taken
    // out of the group gets no new tokens. Refused, not revoked: put back in, the grant works again. No query unless the client requires groups.
    if (token.userId !== null && !(await this.groupAccess.allows(client, token.userId))) throw new InvalidGrantError(NOT_IN_REQUIRED_GROUP);

    // §6: the requested scope MUST NOT include any scope not originally granted; omitted means the same.
    const granted = splitScope(token.scope);
    const requested = request.scope === undefined ? granted : parseScope(request.scope);
    if (requested === undefined) throw new InvalidScopeError('The scope parameter is malformed');
    if (!isSubset(requested, granted)) throw new InvalidScopeError('The requested scope exceeds the scope originally granted');
    const grantedResources = splitResources(token.audience);
    const audience = await this.resources.narrow(request.resources, grantedResources);
    // Before the token is rotated: a refresh that would carry an ID token (Core §12.2) needs one the client may be issued.
    const idTokenRefusal = token.userId !== null && requested.includes(OPENID_SCOPE) ? this.idTokens.refusal(client) : undefined;
    if (idTokenRefusal) throw new UnauthorizedClientError(idTokenRefusal);

    // Minted before the transaction (a JWT access token is signed off the event loop), stored inside it.
    const minted = await this.tokens.mint({
      familyId: token.familyId,
      clientId: client.id,
      userId: token.userId,
      // Issue 48: an admin scope only while the person holds the role; the family keeps it (refreshScope), so a role given back restores it.
      scope: formatScope(token.userId === null ? requested : await this.adminRoles.withinRoles(token.userId, requested)),
      refreshScope: token.scope,
      tokenType: client.accessTokenType,
      authTime: token.authTime,
      sid: token.sid,
      amr: token.amr,
      dpop: dpopJkt === undefined ? undefined : { jkt: dpopJkt, bindRefreshToken: client.isPublic },
      ...this.jwtAccessTokens.restrictedTo(audience, client),
      refreshAudience: grantedResources ?? undefined,
    });
    const sealed = this.repeats.seal(request.refreshToken, token, minted.issued, fingerprint(request, dpopJkt));
    const issued = await this.tokens.rotateRefreshToken(token.id, minted, sealed);
    if (!issued) {
      // Lost a race with another use of the same token: the winner's rotation has committed (the
      // conditional UPDATE waited for it), its successors with it. A repeat gets them; else reuse.
      const rotated = await this.tokens.findByValue(request.refreshToken);
      return this.repeatOrRevoke(rotated ?? token, request, client, dpopJkt);
    }
    return this.respond(issued, token, client);
  }

  /** A rotated token presented again: the first use's answer when RefreshRepeats says it is a repeat; otherwise reuse, and the family is revoked. */
  private async repeatOrRevoke(token: Token, request: RefreshTokenParameters, client: Client, dpopJkt: string | undefined): Promise<TokenResponse> {
    const repeated = await this.repeats.repeat(token, request.refreshToken, fingerprint(request, dpopJkt));
    if (repeated) return this.respond(repeated, token, client);
    await this.tokens.revokeFamily(token.familyId, { actor: `client:${client.id}`, reason: 'refresh_token_reused' });
    throw new InvalidGrantError(INVALID);
  }

  private async respond(issued: IssuedTokens, token: Token, client: Client): Promise<TokenResponse> {
    // Core §12.2: a refresh of an OpenID grant gets a new ID token: same iss, sub, aud and the
    // original auth_time, a new iat, and no nonce (the refresh is no authentication request).
    // A repeat gets a new one too: an ID token is no credential of the chain.
    const idToken =
      token.userId !== null && holdsOpenId(issued.scope)
        ? await this.idTokens.issue({ client, userId: token.userId, authTime: token.authTime, amr: parseAmr(token.amr), sid: token.sid, accessToken: issued.accessToken, scope: splitScope(issued.scope) })
        : undefined;
    return toTokenResponse(issued, idToken);
  }
}
