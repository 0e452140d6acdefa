import { Inject, Injectable } from '@nestjs/common';
import { SignJWT } from 'jose';
import type { Client } from '../../clients/client.entity.js';
import { TokenType } from '../../common/oauth.constants.js';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { SubjectIdentifiers } from '../../openid/subject-identifiers.js';
import { GroupsClaim } from '../../groups/groups-claim.js';
import { AccessTokenFormat } from '../../resource-servers/resource-server.entity.js';
import { SigningAlgorithm } from '../../signing/signing-algorithms.js';
import { SigningKeyRing } from '../../signing/signing-key-ring.js';
import type { AccessTokenClaims, TokenGrant } from '../../tokens/tokens.service.js';
import type { Audience } from '../resource-indicators.js';

/**
 * JWT access tokens (RFC 9068) for resource servers registered for them, which check tokens offline
 * with the published keys instead of asking /introspect. Decided here and nowhere else: a token
 * becomes a JWT when one of its resources asked for JWTs, and its client receives bearer or DPoP
 * tokens (a MAC token is proved with its own key, not a signature of ours). Signed with RS256
 * (§2.1: every resource server can check it) by the key that signs ID tokens, with typ at+jwt (§2.1)
 * so that no ID token checker mistakes it for an ID token. The JWT is stored by its hash like any
 * access token, so revocation and introspection still see it; a resource server checking it
 * offline cannot learn of a revocation before it expires (docs/reference/resource-indicators.md).
 */
@Injectable()
export class JwtAccessTokens {
  constructor(
    private readonly keys: SigningKeyRing,
    private readonly subjects: SubjectIdentifiers,
    private readonly groups: GroupsClaim,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
  ) {}

  /**
   * What a grant tells TokensService about a token restricted to `audience` (none: unrestricted):
   * the resources, and the signer when the token must be a JWT.
   */
  restrictedTo(audience: Audience | undefined, client: Client): Pick<TokenGrant, 'audience' | 'jwt'> {
    if (audience === undefined) return {};
    const jwt = audience.format === AccessTokenFormat.Jwt && client.accessTokenType !== TokenType.Mac;
    return { audience: audience.uris, ...(jwt ? { jwt: (claims: AccessTokenClaims) => this.sign(claims, client) } : {}) };
  }

  private async sign(claims: AccessTokenClaims, client: Client): Promise<string> {
    const signer = this.keys.signer(SigningAlgorithm.RS256);
    // Issue 46: the person's groups when the client opted in (RFC 9068 §2.2.3.1 names `groups` among the claims it may carry); no query otherwise.
    const groups = await this.groups.of(client, claims.userId);
    return new SignJWT({
      ...groups,
      client_id: claims.clientId,
      scope: claims.scope,
      ...(claims.authTime ? { auth_time: Math.floor(claims.authTime.getTime() / 1000) } : {}),
      // RFC 9449 §6.1: a DPoP-bound token names its key.
      ...(claims.dpopJkt ? { cnf: { jkt: claims.dpopJkt } } : {}),
      // RFC 8693 §4.1: a token from a token exchange names who acts for the subject, never impersonates it.
      ...(claims.act ? { act: claims.act } : {}),
    })
      .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: 'at+jwt' })
      .setIssuer(this.app.issuer)
      // §2.2: the resource owner, or the client itself when none is involved (client_credentials).
      // The owner as this client knows them (OpenID Connect Core §8.1): the sub of its ID tokens and
      // userinfo, pairwise when it registered so. The client reads its access tokens (§6: they are
      // not opaque to it), so the person's global id here would let it match people across sectors.
      .setSubject(claims.userId === null ? claims.clientId : this.subjects.of(client, claims.userId))
      .setAudience(claims.audience.length === 1 ? claims.audience[0] : [...claims.audience])
      .setJti(claims.jti)
      .setIssuedAt(Math.floor(claims.issuedAt.getTime() / 1000))
      .setExpirationTime(Math.floor(claims.expiresAt.getTime() / 1000))
      .sign(signer.privateKey);
  }
}
