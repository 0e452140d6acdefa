import { Injectable } from '@nestjs/common';
import { AccessDenied } from '../access/access-denied.js';
import type { TokenPrincipal } from '../access/token-principal.js';
import type { User } from '../users/user.entity.js';
import { ClientsService } from '../clients/clients.service.js';
import { UsersService } from '../users/users.service.js';
import { SubjectIdentifiers } from './subject-identifiers.js';

/** OpenID Connect Core §5.1 claims, as userinfo returns them; absent ones are left out (§5.3.2). */
export interface UserInfo {
  sub: string;
  name?: string;
  given_name?: string;
  family_name?: string;
  preferred_username?: string;
  email?: string;
  email_verified?: boolean;
}

/** Core §5.4: which claims each scope releases. */
const CLAIMS_BY_SCOPE: Readonly<Record<string, (user: User) => Omit<UserInfo, 'sub'>>> = {
  profile: (user) => ({
    ...(user.name !== null ? { name: user.name } : {}),
    ...(user.givenName !== null ? { given_name: user.givenName } : {}),
    ...(user.familyName !== null ? { family_name: user.familyName } : {}),
    preferred_username: user.username,
  }),
  email: (user) => (user.email !== null ? { email: user.email, email_verified: user.emailVerified } : {}),
};

/** Every claim userinfo may release, for discovery's claims_supported. */
export const USERINFO_CLAIMS = ['sub', 'name', 'given_name', 'family_name', 'preferred_username', 'email', 'email_verified'];

@Injectable()
export class UserInfoService {
  constructor(
    private readonly users: UsersService,
    private readonly clients: ClientsService,
    private readonly subjects: SubjectIdentifiers,
  ) {}

  /** The claims the token's scopes release about the person it speaks for (Core §5.3.2: sub always). */
  async claims(principal: TokenPrincipal & { userId: string }): Promise<UserInfo> {
    const [user, client] = await Promise.all([this.users.findById(principal.userId), this.clients.findById(principal.clientId)]);
    // Deleting a person or a client deletes their tokens; one checked a moment before finds nobody.
    if (!user || !client) throw new AccessDenied({ error: 'invalid_token', description: 'The person or the application this access token belongs to no longer exists' }, principal.scheme);
    // The same sub as in the client's ID tokens (Core §5.3.2).
    let info: UserInfo = { sub: this.subjects.of(client, user.id) };
    for (const scope of principal.scopes) {
      const release = CLAIMS_BY_SCOPE[scope];
      if (release) info = { ...info, ...release(user) };
    }
    return info;
  }
}
