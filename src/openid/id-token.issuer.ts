import { Inject, Injectable } from '@nestjs/common';
import { SignJWT } from 'jose';
import { createHash } from 'node:crypto';
import { Clock } from '../common/clock.js';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { openIdConfig, type OpenIdConfig } from '../config/openid.config.js';
import type { Client } from '../clients/client.entity.js';
import { SecurityProfiles } from '../clients/security-profile.js';
import type { SigningAlgorithm } from '../signing/signing-algorithms.js';
import { SigningKeyRing } from '../signing/signing-key-ring.js';
import { SubjectIdentifiers } from './subject-identifiers.js';
import { acrOf, type AuthenticationMethod } from '../common/authentication-context.js';
import { UsersService } from '../users/users.service.js';
import { GroupsClaim } from '../groups/groups-claim.js';
import { CLAIM_SCOPES, claimsOf, type UserClaims } from './user-claims.js';

/** What an ID token asserts: who signed in, for which client, when, and with which access token. */
export interface IdTokenSubject {
  /** The audience; its settings choose the algorithm and the kind of sub. */
  client: Client;
  /** The person's user id; the sub is derived from it per client (SubjectIdentifiers). */
  userId: string;
  /** When the person signed in; omitted only for grants begun before OpenID Connect. */
  authTime: Date | null;
  /** The authentication request's nonce; never sent on refresh (Core §12.2). */
  nonce?: string | null;
  /** How the person signed in (RFC 8176); a password when not recorded. */
  amr?: readonly AuthenticationMethod[];
  /** The sign-in session's public id (Back-Channel Logout 1.0 §2.1 sid); null for grants begun before. */
  sid?: string | null;
  /** The access token issued beside it, for at_hash (Core §3.1.3.6); none for response_type=id_token (Core §3.2.2.10). */
  accessToken?: string;
  /** The scopes granted: profile and email release their claims into the ID token (user-claims.ts). */
  scope: readonly string[];
}

/** The hash that at_hash halves (Core §3.1.3.6): the one of the JWS alg; Ed25519 signs with SHA-512. */
const AT_HASH: Record<SigningAlgorithm, string> = { RS256: 'sha256', ES256: 'sha256', EdDSA: 'sha512' };

/**
 * Signs ID tokens (OpenID Connect Core §2, §3.1.3.6) with the key that signs now for the client's
 * algorithm. The key is already imported (SigningKeyRing); signing is the only work per token.
 */
@Injectable()
export class IdTokenIssuer {
  constructor(
    private readonly keys: SigningKeyRing,
    private readonly subjects: SubjectIdentifiers,
    private readonly profiles: SecurityProfiles,
    private readonly clock: Clock,
    private readonly users: UsersService,
    private readonly groups: GroupsClaim,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
    @Inject(openIdConfig.KEY) private readonly config: OpenIdConfig,
  ) {}

  /**
   * Why `client` may not be issued an ID token at all (FAPI 2.0 §5.4.1,
   * SecurityProfiles.idTokenAlgorithmProblem), or undefined. A grant that will issue one asks
   * before it writes anything and refuses with unauthorized_client, so that no token is left behind.
   */
  refusal(client: Client): string | undefined {
    return this.profiles.idTokenAlgorithmProblem(client);
  }

  async issue(token: IdTokenSubject): Promise<string> {
    // Dynamic Registration §2 id_token_signed_response_alg; RS256 by default.
    const alg = token.client.openId.idTokenSignedResponseAlg;
    const signer = this.keys.signer(alg);
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const amr = token.amr ?? ['pwd'];
    // Issue 46: the client's groups claim when it opted in (GroupsClaim: no query otherwise), beside the scopes' claims.
    const [claims, groups] = await Promise.all([this.userClaims(token), this.groups.of(token.client, token.userId)]);
    return new SignJWT({
      // The person's claims first, so that none of them can stand in for a claim about the authentication.
      ...claims,
      ...groups,
      ...(token.authTime ? { auth_time: Math.floor(token.authTime.getTime() / 1000) } : {}),
      ...(token.nonce ? { nonce: token.nonce } : {}),
      ...(token.sid ? { sid: token.sid } : {}),
      // The left-most half of the access token's hash binds the two (Core §3.1.3.8 lets the client check it).
      ...(token.accessToken !== undefined ? { at_hash: atHash(alg, token.accessToken) } : {}),
      // Core §2 amr (RFC 8176 §2) and acr: how the person signed in, and the level that reached (authentication-context.ts).
      amr: [...amr],
      acr: acrOf(amr),
    })
      .setProtectedHeader({ alg, kid: signer.kid, typ: 'JWT' })
      .setIssuer(this.app.issuer)
      .setSubject(this.subjects.of(token.client, token.userId))
      // A single audience, the client: azp is then not needed (Core §2).
      .setAudience(token.client.id)
      .setIssuedAt(now)
      .setExpirationTime(now + this.config.idTokenTtlSeconds)
      .sign(signer.privateKey);
  }

  /**
   * The claims the granted scopes release about the person (Core §5.4), the same as userinfo
   * answers: in every ID token issued without an access token (§5.4: there is no userinfo to ask
   * then), and otherwise as the client's id_token_claims, or the server's ID_TOKEN_CLAIMS, say.
   */
  private async userClaims(token: IdTokenSubject): Promise<UserClaims> {
    const wanted = token.accessToken === undefined || (token.client.openId.idTokenClaims ?? this.config.idTokenClaims);
    if (!wanted || !token.scope.some((scope) => CLAIM_SCOPES.includes(scope))) return {};
    const user = await this.users.findById(token.userId);
    return user ? claimsOf(user, token.scope) : {};
  }
}

function atHash(alg: SigningAlgorithm, accessToken: string): string {
  const digest = createHash(AT_HASH[alg]).update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

