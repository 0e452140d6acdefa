import { Injectable } from '@nestjs/common';
import { AccessDenied } from '../access/access-denied.js';
import type { TokenPrincipal } from '../access/token-principal.js';
import { ClientsService } from '../clients/clients.service.js';
import { UsersService } from '../users/users.service.js';
import { GroupsClaim, type GroupsClaimValue } from '../groups/groups-claim.js';
import { SubjectIdentifiers } from './subject-identifiers.js';
import { claimsOf, USER_CLAIMS, type UserClaims } from './user-claims.js';

/** OpenID Connect Core §5.1 claims, as userinfo returns them; absent ones are left out (§5.3.2). */
export interface UserInfo extends UserClaims, GroupsClaimValue {
  sub: string;
}

/** Every claim userinfo may release, for discovery's claims_supported. */
export const USERINFO_CLAIMS = ['sub', ...USER_CLAIMS, 'groups'];

@Injectable()
export class UserInfoService {
  constructor(
    private readonly users: UsersService,
    private readonly clients: ClientsService,
    private readonly subjects: SubjectIdentifiers,
    private readonly groups: GroupsClaim,
  ) {}

  /** The claims the token's scopes release about the person it speaks for (Core §5.3.2: sub always). */
  async claims(principal: TokenPrincipal & { userId: string }): Promise<UserInfo> {
    const [user, client] = await Promise.all([this.users.findById(principal.userId), this.clients.findById(principal.clientId)]);
    // Deleting a person or a client deletes their tokens; one checked a moment before finds nobody.
    if (!user || !client) throw new AccessDenied({ error: 'invalid_token', description: 'The person or the application this access token belongs to no longer exists' }, principal.scheme);
    // The same sub as in the client's ID tokens (Core §5.3.2).
    // Issue 46: the groups claim when the token's client opted in (one query then, none otherwise).
    return { sub: this.subjects.of(client, user.id), ...claimsOf(user, principal.scopes), ...(await this.groups.of(client, user.id)) };
  }
}
