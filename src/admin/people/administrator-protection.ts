import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { DomainError } from '../../common/domain-error.js';
import type { User } from '../../users/user.entity.js';
import { AdminRolesService } from '../admin-roles.service.js';
import type { PeopleAdministrator } from './people-administrator.js';

/** What an administrator does to a person, as AdministratorProtection tells them apart. */
export type PersonOperation = 'update' | 'set_password' | 'reset_factors' | 'remove_passkey' | 'lock' | 'unlock' | 'delete' | 'end_sessions' | 'withdraw_grant' | 'invite' | 'verify_email' | 'link_upstream' | 'unlink_upstream';

const VERBS: Record<PersonOperation, string> = {
  update: 'change the profile of',
  set_password: 'set the password of',
  reset_factors: 'reset the second factors of',
  remove_passkey: 'remove a passkey of',
  lock: 'lock',
  unlock: 'unlock',
  delete: 'delete',
  end_sessions: 'end the sessions of',
  withdraw_grant: "withdraw an application's access of",
  invite: 'invite',
  verify_email: 'send an address verification to',
  link_upstream: 'link an upstream identity to',
  unlink_upstream: 'unlink an upstream identity from',
};

/**
 * What a help desk may do to an administrator: end their sessions (a stolen laptop), which takes
 * nothing from them but a sign-in. Everything else would let a help desk take an administrator's
 * account over (a password, an address to invite, factors to enrol again, an upstream identity
 * linked: whoever holds it signs in as them) or lock them out (a link removed).
 */
const OPEN_ON_ADMINISTRATORS: ReadonlySet<PersonOperation> = new Set(['end_sessions']);
/** What nobody does to themselves over HTTP: the console would lock its own user out mid-session. */
const NOT_ON_ONESELF: ReadonlySet<PersonOperation> = new Set(['lock', 'delete']);
/** What would leave the server without an active owner, whom only the server's operator could then make again. */
const REMOVES_AN_OWNER: ReadonlySet<PersonOperation> = new Set(['lock', 'delete']);

/**
 * Who may change an administrator (issue 48), decided here for the CLI and the admin API alike
 * (AdminAccess has already decided that the caller may administer people at all):
 * - only an owner changes a person who holds any administrator role, but anyone who administers
 *   people may end their sessions;
 * - nobody locks or deletes themselves (the CLI's operator is nobody's person);
 * - the last active owner is never locked or deleted (last_owner), not even from the CLI: make
 *   someone else an owner first, or remove the role (`users:roles`) and then the person.
 */
@Injectable()
export class AdministratorProtection {
  constructor(private readonly roles: AdminRolesService) {}

  /**
   * Why `administrator` may not do `operation` to `target`, or null. Read through `manager` when
   * the operation runs in a transaction (lock and delete must: the owners are counted there), and
   * returned rather than thrown, since a throw inside a unit rolls back its neighbours (Transactions).
   */
  async refusal(administrator: PeopleAdministrator, target: User, operation: PersonOperation, manager?: EntityManager): Promise<DomainError | null> {
    if (NOT_ON_ONESELF.has(operation) && administrator.actor === `user:${target.id}`) {
      return new DomainError('self_protected', `You cannot ${VERBS[operation]} yourself; another administrator can`);
    }
    const roles = await this.roles.rolesOf(target.id, manager);
    if (roles.length > 0 && !administrator.owner && !OPEN_ON_ADMINISTRATORS.has(operation)) {
      return new DomainError('administrator_protected', `${target.username} is an administrator (${roles.join(', ')}): only an owner may ${VERBS[operation]} them`);
    }
    if (REMOVES_AN_OWNER.has(operation) && manager === undefined) throw new Error(`${operation} is checked in its own transaction, where the owners are counted`);
    if (REMOVES_AN_OWNER.has(operation) && roles.includes('owner') && target.active && (await this.roles.activeOwnersBesides(target.id, manager!)) === 0) {
      return new DomainError('last_owner', `${target.username} is the last active owner: make someone else an owner first`);
    }
    return null;
  }

  /** refusal(), thrown: for an operation that is not part of a larger transaction. */
  async assert(administrator: PeopleAdministrator, target: User, operation: PersonOperation): Promise<void> {
    const refused = await this.refusal(administrator, target, operation);
    if (refused) throw refused;
  }
}
