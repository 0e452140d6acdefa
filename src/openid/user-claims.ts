import type { User } from '../users/user.entity.js';

/** OpenID Connect Core §5.1 claims about a person (sub aside, which depends on the client). */
export interface UserClaims {
  name?: string;
  given_name?: string;
  family_name?: string;
  preferred_username?: string;
  /** Core §5.1: seconds since the epoch. */
  updated_at?: number;
  email?: string;
  email_verified?: boolean;
}

/** Core §5.4: which claims each scope releases; absent values are left out (§5.3.2). */
const CLAIMS_BY_SCOPE: Readonly<Record<string, (user: User) => UserClaims>> = {
  profile: (user) => ({
    ...(user.name !== null ? { name: user.name } : {}),
    ...(user.givenName !== null ? { given_name: user.givenName } : {}),
    ...(user.familyName !== null ? { family_name: user.familyName } : {}),
    preferred_username: user.username,
    updated_at: Math.floor(user.updatedAt.getTime() / 1000),
  }),
  email: (user) => (user.email !== null ? { email: user.email, email_verified: user.emailVerified } : {}),
};

/** The scopes that release claims about the person (Core §5.4). */
export const CLAIM_SCOPES: readonly string[] = Object.keys(CLAIMS_BY_SCOPE);

/** Every claim about the person we may release, for discovery's claims_supported. */
export const USER_CLAIMS = ['name', 'given_name', 'family_name', 'preferred_username', 'updated_at', 'email', 'email_verified'];

/**
 * The claims `scopes` release about `user`: the one set userinfo answers and the ID token carries
 * (Core §5.4, §5.3.2), so that the two never disagree.
 */
export function claimsOf(user: User, scopes: Iterable<string>): UserClaims {
  let claims: UserClaims = {};
  for (const scope of scopes) {
    const release = CLAIMS_BY_SCOPE[scope];
    if (release) claims = { ...claims, ...release(user) };
  }
  return claims;
}
