import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditService, type AuditActor } from '../audit/audit.service.js';
import { AuthorizationCodeStore } from '../codes/authorization-code.store.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/domain-error.js';
import { DeviceAuthorizationStore } from '../device-codes/device-authorization.store.js';
import { GroupsService } from '../groups/groups.service.js';
import { TokenStore } from '../tokens/token.store.js';
import { Transactions } from '../database/transactions.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { User } from '../users/user.entity.js';
import type { ProfileChanges } from '../users/user-profile.js';
import { UsersService } from '../users/users.service.js';

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * What happens to a person's account as a whole, across the person (users/) and their sign-in
 * sessions (sessions/), which know nothing of each other's rules.
 */
@Injectable()
export class AccountsService {
  constructor(
    private readonly users: UsersService,
    private readonly sessions: SessionsService,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly tokens: TokenStore,
    private readonly codes: AuthorizationCodeStore,
    private readonly devices: DeviceAuthorizationStore,
    private readonly clock: Clock,
    private readonly groups: GroupsService,
  ) {}

  /**
   * Sets a new password and ends every session of the person in the same transaction (OWASP ASVS
   * 3.3.3): whoever signed in with the old password is signed out on every instance.
   */
  async setPassword(username: string, password: string): Promise<User> {
    const passwordHash = await this.users.hashNewPassword(password);
    const user = await this.users.require(username);
    await this.transactions.run((manager) => this.setPasswordWithin(user.id, passwordHash, manager));
    return Object.assign(user, { passwordHash });
  }

  /** setPassword() in the caller's transaction (with an administrator's audit event), from a hash of hashNewPassword(); returns how many sessions ended. */
  async setPasswordWithin(userId: string, passwordHash: string, manager: EntityManager): Promise<number> {
    await this.users.storePasswordHash(userId, passwordHash, manager);
    return this.sessions.endAllOf(userId, { manager });
  }

  /**
   * The person changes their own password (issue 48, the account page; the current one checked by
   * the caller): every other session ends in the same transaction (OWASP ASVS 3.3.3), the one the
   * change was made in (`keepRow`, its sessions row) goes on. Audited as user.password_changed.
   */
  changeOwnPassword(userId: string, passwordHash: string, keepRow: string, actor: AuditActor): Promise<number> {
    return this.transactions.run(async (manager) => {
      await this.users.storePasswordHash(userId, passwordHash, manager);
      const ended = await this.sessions.endAllOf(userId, { exceptRow: keepRow, manager });
      await this.audit.record({ actor, action: 'user.password_changed', subject: `user:${userId}`, details: { sessions_ended: ended } }, manager);
      return ended;
    });
  }

  /** The person's own profile (the account page), audited as user.updated with the attributes changed, never their values. */
  updateOwnProfile(user: User, changes: ProfileChanges, changed: string[], actor: AuditActor): Promise<User> {
    return this.transactions.run(async (manager) => {
      const updated = await this.users.applyProfile(user, changes, manager);
      await this.audit.record({ actor, action: 'user.updated', subject: `user:${user.id}`, details: { changed } }, manager);
      return updated;
    });
  }

  /** "Sign out everywhere else" (OWASP ASVS 3.3.4): every session of the person but `keepRow` ends, audited with how many. */
  signOutElsewhere(userId: string, keepRow: string, actor: AuditActor): Promise<number> {
    return this.transactions.run(async (manager) => {
      const ended = await this.sessions.endAllOf(userId, { exceptRow: keepRow, manager });
      await this.audit.record({ actor, action: 'user.signed_out_elsewhere', subject: `user:${userId}`, details: { sessions_ended: ended } }, manager);
      return ended;
    });
  }

  /**
   * Ends the person's live session named `publicId` (the person on the account page, an
   * administrator over the admin API), audited as session.ended; false, with nothing changed and
   * nothing recorded, when no live session of theirs has that name.
   */
  endSession(userId: string, publicId: string, actor: AuditActor): Promise<boolean> {
    if (!UUID_SHAPE.test(publicId)) return Promise.resolve(false);
    return this.transactions.run(async (manager) => {
      if (!(await this.sessions.endByPublicId(userId, publicId, manager))) return false;
      await this.audit.record({ actor, action: 'session.ended', subject: `user:${userId}`, details: { session: publicId } }, manager);
      return true;
    });
  }

  /**
   * Deletes the person: their sessions end first, in the same transaction, so that applications
   * registered for back-channel logout are told (a cascade alone would end them silently); then
   * their codes, tokens, consents and sessions go with them (ON DELETE CASCADE). Audited.
   */
  async deleteUser(username: string, actor: AuditActor): Promise<void> {
    const user = await this.users.require(username);
    await this.transactions.run((manager) => this.deleteUserWithin(user, actor, manager));
  }

  /** deleteUser() in the caller's transaction (the admin API's, which first checks the person is not the last owner). */
  async deleteUserWithin(user: User, actor: AuditActor, manager: EntityManager): Promise<void> {
    const ended = await this.sessions.endAllOf(user.id, { manager });
    // Group memberships name people and groups alike, so no foreign key removes them (groups/).
    await this.groups.forgetUser(user.id, manager);
    await this.users.deleteWithin(user.id, manager);
    await this.audit.record({ actor, action: 'user.deleted', subject: `user:${user.id}`, details: { sessions_ended: ended } }, manager);
  }

  /**
   * An administrator ends every session of the person (a lost laptop, a suspicion): they sign in
   * again everywhere, and the applications they signed in to are told (Back-Channel Logout).
   * Audited with the number of sessions ended, in the same transaction.
   */
  async signOutEverywhere(username: string, actor: AuditActor): Promise<number> {
    const user = await this.users.require(username);
    return this.transactions.run((manager) => this.signOutEverywhereWithin(user, actor, manager));
  }

  /** signOutEverywhere() in the caller's transaction. */
  async signOutEverywhereWithin(user: User, actor: AuditActor, manager: EntityManager): Promise<number> {
    const ended = await this.sessions.endAllOf(user.id, { manager });
    await this.audit.record({ actor, action: 'user.signed_out_everywhere', subject: `user:${user.id}`, details: { sessions_ended: ended } }, manager);
    return ended;
  }

  /**
   * Deprovisioning (issue 46; SCIM `active: false`, RFC 7643 §4.1.1; `users:deactivate`): in one
   * transaction the person is marked inactive, every session ends (applications registered for
   * Back-Channel Logout are told, through the sessions' outbox), every token of theirs is revoked
   * (offline_access grants, device and exchanged tokens included), unredeemed codes are used up
   * and approved device requests denied. Every instance drops the revoked access tokens it keeps
   * when the commit's notification arrives; this one right after the commit. Sign-in is refused
   * until reactivate(): the password check, passkeys, upstream providers and the session's own
   * start (a gated INSERT) all look at `active`.
   */
  async deactivate(userId: string, actor: AuditActor): Promise<{ sessionsEnded: number; tokensRevoked: number }> {
    const user = await this.requireById(userId);
    return this.transactions.run((manager) => this.deactivateWithin(user, actor, manager));
  }

  /** deactivate() in the caller's transaction (SCIM: with the rest of the same request's changes). */
  async deactivateWithin(user: User, actor: AuditActor, manager: EntityManager): Promise<{ sessionsEnded: number; tokensRevoked: number }> {
    const now = this.clock.now();
    await this.users.setActive(user.id, false, manager);
    // Tokens first, so that the count is every token (the sessions' end revokes their grants too).
    const tokensRevoked = await this.tokens.revokeEveryTokenOf(user.id, now, manager);
    await this.codes.consumeEveryCodeOf(user.id, now, manager);
    await this.devices.denyApprovedOfPerson(user.id, manager);
    const sessionsEnded = await this.sessions.endAllOf(user.id, { manager });
    await this.audit.record({ actor, action: 'user.deactivated', subject: `user:${user.id}`, details: { was_active: user.active, sessions_ended: sessionsEnded, tokens_revoked: tokensRevoked } }, manager);
    return { sessionsEnded, tokensRevoked };
  }

  /** The person may sign in again (their old tokens stay revoked). Audited. */
  async reactivate(userId: string, actor: AuditActor): Promise<void> {
    const user = await this.requireById(userId);
    await this.transactions.run((manager) => this.reactivateWithin(user, actor, manager));
  }

  /** reactivate() in the caller's transaction. */
  async reactivateWithin(user: User, actor: AuditActor, manager: EntityManager): Promise<void> {
    await this.users.setActive(user.id, true, manager);
    await this.audit.record({ actor, action: 'user.reactivated', subject: `user:${user.id}`, details: { was_active: user.active } }, manager);
  }

  /**
   * Someone else set the person's password (a directory through SCIM), in the caller's transaction:
   * every session ends, as with setPassword (OWASP ASVS 3.3.3). Returns how many.
   */
  passwordReplacedWithin(userId: string, manager: EntityManager): Promise<number> {
    return this.sessions.endAllOf(userId, { manager });
  }

  private async requireById(userId: string): Promise<User> {
    const user = UUID_SHAPE.test(userId) ? await this.users.findById(userId) : null;
    if (!user) throw new DomainError('user_not_found', `No user with id "${userId}".`);
    return user;
  }
}
