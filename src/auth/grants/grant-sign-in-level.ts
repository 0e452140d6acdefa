import { Injectable } from '@nestjs/common';
import type { Client } from '../../clients/client.entity.js';
import { meetsRequiredAcr, parseAmr, type AuthenticationMethod } from '../../common/authentication-context.js';
import { SecondFactors } from '../../factors/second-factors.service.js';
import type { User } from '../../users/user.entity.js';
import { UsersService } from '../../users/users.service.js';

/**
 * RFC 6749 §5.2 error_description of a grant whose recorded sign-in (a refresh token's, a subject
 * token's, an approved device's or code's) is below what the client or the person requires now.
 */
export const SIGN_IN_BELOW_FLOOR = 'The sign-in no longer meets what this client requires: sign in again';

/**
 * Whether a grant that issues a person's token at the token endpoint may, by the sign-in it rests
 * on (meetsRequiredAcr): the client's floor and the person's requirement as they are now, not as
 * they were when the person signed in. An administrator who raises a floor or requires a second
 * factor of someone means it for every token issued from then on (issue 43), not only for the next
 * visit to the authorization endpoint.
 *
 * A grant refused so is not revoked: the refusal is the administrator's policy, not a sign of theft,
 * and the grant answers again if the policy is relaxed. Nothing is written on the way: the person
 * signs in again (with what is now required) for a new grant.
 */
@Injectable()
export class GrantSignInLevel {
  constructor(
    private readonly users: UsersService,
    private readonly factors: SecondFactors,
  ) {}

  /** A sign-in of `user` with `amr`: the person is in hand. */
  private meets(client: Client, user: User, amr: readonly AuthenticationMethod[]): boolean {
    return meetsRequiredAcr(amr, client, this.factors.mustHaveSecondFactor(user));
  }

  /**
   * The password grant's sign-in: a password alone (urn:latchkey:acr:pwd). Besides the floor and the
   * administrator's requirement, a person who enrolled a second factor of their own accord is asked
   * for it at every browser sign-in (LoginService), so a password alone does not sign them in here either.
   */
  async passwordAloneSuffices(client: Client, user: User): Promise<boolean> {
    return this.meets(client, user, ['pwd']) && !(await this.factors.hasSecondFactor(user.id));
  }

  /** A sign-in recorded earlier with its grant (amr as stored): the person as they are now. A person who is gone meets nothing. */
  async stillMeets(client: Client, userId: string, storedAmr: string | null): Promise<boolean> {
    const amr = parseAmr(storedAmr);
    // The person is read only when their requirement decides: a password-only sign-in that meets the client's floor.
    if (meetsRequiredAcr(amr, client, true)) return true;
    if (!meetsRequiredAcr(amr, client, false)) return false;
    const user = await this.users.findById(userId);
    return user !== null && this.meets(client, user, amr);
  }
}
