import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { DomainError } from '../common/domain-error.js';
import { PasswordHasher } from './password-hasher.js';
import { User } from './user.entity.js';
import { validateProfile, type ProfileChanges } from './user-profile.js';
import { UserStore, type ProvisionedUserChanges } from './user.store.js';

export type { ProvisionedUserChanges };

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
/** NIST SP 800-63B §5.1.1.2: at least 8 characters; a generous maximum keeps hashing bounded. */
const PASSWORD_MIN = 8;
const PASSWORD_MAX = 512;

export interface UserView {
  id: string;
  username: string;
  email: string | null;
  email_verified: boolean;
  name: string | null;
  given_name: string | null;
  family_name: string | null;
  /** Whether an administrator requires a second factor of this person. */
  require_mfa: boolean;
  /** Whether the person has a password here: people from an upstream identity provider have none unless one is set. */
  has_password: boolean;
  /** False while the person is deactivated: every sign-in is refused (users:deactivate, SCIM). */
  active: boolean;
  created_at: string;
}

@Injectable()
export class UsersService {
  constructor(
    private readonly store: UserStore,
    private readonly hasher: PasswordHasher,
  ) {}

  async create(username: string, password: string, profile: ProfileChanges = {}): Promise<User> {
    return this.store.insert(await this.prepareNew(username, password, profile));
  }

  /**
   * A new person, checked and not yet stored (the caller inserts it with insertWithin, with its
   * audit event): without a password (`undefined`: an empty hash, which no password matches) the
   * person signs in once invited, or once an administrator sets one.
   */
  async prepareNew(username: string, password: string | undefined, profile: ProfileChanges = {}): Promise<User> {
    if (!USERNAME.test(username)) {
      throw new DomainError('invalid_username', 'Username must be 1 to 64 characters: letters, digits, and . _ @ - (not first).');
    }
    if (password !== undefined) this.assertPasswordAcceptable(password);
    const { email = null, emailVerified = false, name = null, givenName = null, familyName = null, requireMfa = false } = validateProfile(profile);
    if (await this.store.exists(username)) {
      throw new DomainError('username_taken', `A user named "${username}" already exists.`);
    }
    const passwordHash = password === undefined ? '' : await this.hasher.hash(password);
    // The id is the OpenID Connect sub (Core §2): random, never reused, never the username.
    return Object.assign(new User(), { id: randomUUID(), username, passwordHash, email, emailVerified: email !== null && emailVerified, name, givenName, familyName, requireMfa });
  }

  /**
   * Changes a person's profile. A new email address is unverified unless the same change says it
   * is verified: only an administrator vouches for an address (email_verified, Core §5.1).
   */
  async updateProfile(username: string, changes: ProfileChanges): Promise<User> {
    return this.applyProfile(await this.require(username), changes);
  }

  /** updateProfile() for a person already read, in the caller's transaction when given (with its audit event). */
  async applyProfile(user: User, changes: ProfileChanges, manager?: EntityManager): Promise<User> {
    const checked = validateProfile(changes);
    const email = checked.email === undefined ? user.email : checked.email;
    const emailVerified = email === null ? false : (checked.emailVerified ?? (email === user.email ? user.emailVerified : false));
    // Only what the change names: an attribute left undefined keeps its value.
    const applied = { ...Object.fromEntries(Object.entries(checked).filter(([, value]) => value !== undefined)), emailVerified };
    await this.store.updateProfile(user.id, applied, manager);
    return Object.assign(user, applied);
  }

  /** The user whose password this is, or null; unknown usernames cost as much as wrong passwords. */
  async authenticate(username: string, password: string): Promise<User | null> {
    return (await this.checkPassword(username, password)).user;
  }

  /**
   * authenticate(), also naming the person a refused attempt was for (`named`; null for an unknown
   * username), so that the sign-in page can record it among that person's security events (issue 48).
   */
  async checkPassword(username: string, password: string): Promise<{ user: User | null; named: User | null }> {
    const found = USERNAME.test(username) && password.length <= PASSWORD_MAX ? await this.store.findByUsername(username) : null;
    // A deactivated person (issue 46) is checked against the decoy like an unknown one: the same
    // answer, at the same cost, so a password guesser learns nothing about who was deactivated.
    const user = found?.active ? found : null;
    // An empty hash: a person from an upstream identity provider, with no password here (checked against the decoy, so it costs the same).
    const ok = await this.hasher.verify(user?.passwordHash || undefined, password);
    return { user: ok ? user : null, named: found };
  }

  /**
   * A person an upstream identity provider vouched for, created on their first sign-in (issue 45):
   * no password here (an empty hash, which no password matches), the profile the provider's mapping
   * gave, and the first of `usernames` that is valid and free, else one made from it. Inserted in
   * the caller's transaction, with the link that names them.
   */
  async createWithoutPassword(usernames: readonly string[], profile: ProfileChanges, manager: EntityManager): Promise<User> {
    const { email = null, emailVerified = false, name = null, givenName = null, familyName = null } = validateProfile(profile);
    const username = await this.freeUsername(usernames);
    const user = Object.assign(new User(), { id: randomUUID(), username, passwordHash: '', email, emailVerified: email !== null && emailVerified, name, givenName, familyName });
    return this.store.insert(user, manager);
  }

  /** The first valid, free name of `candidates`; else the first valid one (or "user") with a random suffix. */
  private async freeUsername(candidates: readonly string[]): Promise<string> {
    const valid = candidates.filter((candidate) => USERNAME.test(candidate));
    for (const candidate of valid) if (!(await this.store.exists(candidate))) return candidate;
    const base = (valid[0] ?? 'user').slice(0, 54);
    return `${base}-${randomUUID().slice(0, 8)}`;
  }

  findById(id: string): Promise<User | null> {
    return this.store.findById(id);
  }

  findByUsername(username: string): Promise<User | null> {
    return USERNAME.test(username) ? this.store.findByUsername(username) : Promise.resolve(null);
  }

  /** The people with this address, whatever its case (email-links/: a forgotten password, a registration). */
  findByEmail(email: string): Promise<User[]> {
    return this.store.findByEmail(email);
  }

  list(): Promise<User[]> {
    return this.store.list();
  }

  /** A password's hash, once it meets the rules (NIST SP 800-63B §5.1.1.2): a password change is AccountsService's, since it ends sessions too. */
  async hashNewPassword(password: string): Promise<string> {
    this.assertPasswordAcceptable(password);
    return this.hasher.hash(password);
  }

  /** Stores a new password hash, in the caller's transaction. */
  async storePasswordHash(userId: string, passwordHash: string, manager: EntityManager): Promise<void> {
    await this.store.storePasswordHash(userId, passwordHash, manager);
  }

  /** Sets whether the person may sign in, in the caller's transaction (AccountsService.deactivate/reactivate). */
  setActive(userId: string, active: boolean, manager: EntityManager): Promise<boolean> {
    return this.store.setActive(userId, active, manager);
  }

  /** Deletes the user; their codes, tokens, consents and sessions go with them (ON DELETE CASCADE). */
  async delete(username: string): Promise<void> {
    const user = await this.require(username);
    await this.store.delete(user.id);
  }

  /** Deletes the user in the caller's transaction (AccountsService ends their sessions first, in the same one). */
  async deleteWithin(userId: string, manager: EntityManager): Promise<void> {
    await this.store.delete(userId, manager);
  }

  toView(user: User): UserView {
    return {
      id: user.id,
      username: user.username,
      email: user.email,
      email_verified: user.emailVerified,
      name: user.name,
      given_name: user.givenName,
      family_name: user.familyName,
      require_mfa: user.requireMfa,
      has_password: user.passwordHash !== '',
      active: user.active,
      created_at: user.createdAt.toISOString(),
    };
  }

  async require(username: string): Promise<User> {
    const user = USERNAME.test(username) ? await this.store.findByUsername(username) : null;
    if (!user) throw new DomainError('user_not_found', `No user named "${username}".`);
    return user;
  }

  private assertPasswordAcceptable(password: string): void {
    if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
      throw new DomainError('invalid_password', `Password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`);
    }
  }

  /**
   * A person a directory provisions (SCIM, issue 46), not yet stored: exactly this username (taken
   * in any case is username_taken, since SCIM userNames are case-insensitive, RFC 7643 §4.1.1), a
   * password only when the directory sends one, under the same rules as any other. The caller
   * inserts it with insertWithin, in its own transaction.
   */
  async prepareProvisioned(username: string, password: string | undefined, profile: ProfileChanges, active: boolean): Promise<User> {
    const checked = await this.checkProvisioned(undefined, { username, password, profile });
    const { email = null, emailVerified = false, name = null, givenName = null, familyName = null } = checked;
    return Object.assign(new User(), { id: randomUUID(), username, passwordHash: checked.passwordHash ?? '', email, emailVerified: email !== null && emailVerified, name, givenName, familyName, requireMfa: false, active });
  }

  insertWithin(user: User, manager: EntityManager): Promise<User> {
    return this.store.insert(user, manager);
  }

  /**
   * A directory's change to a person (SCIM, issue 46), checked: a valid username no one else has
   * (in any case), an acceptable password (hashed), a valid profile. Nothing is written.
   */
  async checkProvisioned(userId: string | undefined, changes: { username?: string; password?: string; profile: ProfileChanges }): Promise<ProvisionedUserChanges> {
    const checked: ProvisionedUserChanges = { ...validateProfile(changes.profile) };
    delete (checked as ProfileChanges).requireMfa;
    if (changes.username !== undefined) {
      if (!USERNAME.test(changes.username)) throw new DomainError('invalid_username', 'Username must be 1 to 64 characters: letters, digits, and . _ @ - (not first).');
      const holder = await this.store.findByUsernameIgnoringCase(changes.username);
      if (holder && holder.id !== userId) throw new DomainError('username_taken', `A user named "${holder.username}" already exists.`);
      checked.username = changes.username;
    }
    if (changes.password !== undefined) checked.passwordHash = await this.hashNewPassword(changes.password);
    return checked;
  }

  /** Stores a checked change (checkProvisioned) in the caller's transaction. */
  updateProvisionedWithin(userId: string, changes: ProvisionedUserChanges, manager: EntityManager): Promise<void> {
    return this.store.updateProvisioned(userId, changes, manager);
  }

  findByUsernameIgnoringCase(username: string): Promise<User | null> {
    return USERNAME.test(username) ? this.store.findByUsernameIgnoringCase(username) : Promise.resolve(null);
  }
}
