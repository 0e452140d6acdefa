import { Injectable } from '@nestjs/common';
import { isEmail } from 'class-validator';
import { AuditService, type AuditActor } from '../audit/audit.service.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/domain-error.js';
import { Transactions } from '../database/transactions.js';
import type { User } from '../users/user.entity.js';
import type { ProfileChanges } from '../users/user-profile.js';
import { UsersService } from '../users/users.service.js';
import { UPSTREAM_PROTOCOL, type UpstreamProvider } from './identity-provider-settings.js';
import { IdentityProviderStore } from './identity-provider.store.js';
import { UpstreamGroups } from './upstream-groups.js';

/** How a link was made: a just-in-time account, the person's own explicit step, or an administrator. */
export type LinkOrigin = 'created' | 'linked' | 'admin';

/** The audit events of an administrator's or a person's own link and unlink (the CLI and the admin API record the same ones). */
export const UPSTREAM_LINK_AUDIT = {
  linked: 'user.upstream_linked',
  unlinked: 'user.upstream_unlinked',
} as const;

/** What users:show prints of a person's upstream identities. */
export interface UpstreamLinkView {
  idp: string;
  subject: string;
  origin: string;
  created_at: string;
  last_sign_in_at: string | null;
}

/** Thrown inside the creating transaction when another sign-in linked the same identity first: the new person is rolled back. */
class LinkedMeanwhile extends Error {}

/**
 * Whom an upstream identity signs in (issue 45). The link, kept by (provider, upstream subject),
 * is the only way: never an email address, which an upstream may let anyone set or may not have
 * verified (the account-takeover-by-email attack). A person without a link gets an account of
 * their own when the provider creates accounts; linking to an existing person is the person's own
 * authenticated step or an administrator's command, never automatic.
 */
@Injectable()
export class UpstreamAccounts {
  constructor(
    private readonly store: IdentityProviderStore,
    private readonly users: UsersService,
    private readonly audit: AuditService,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly groups: UpstreamGroups,
  ) {}

  /** The linked person, a just-in-time account, or null when the provider creates none and nobody is linked. */
  async personFor(provider: UpstreamProvider, subject: string, claims: Record<string, unknown>): Promise<{ user: User; created: boolean } | null> {
    const linked = await this.linkedPerson(provider.id, subject);
    if (linked) return { user: linked, created: false };
    if (!provider.settings.createAccounts) return null;
    try {
      const user = await this.transactions.run(async (manager) => {
        const { usernames, profile } = mappedProfile(provider, claims);
        const created = await this.users.createWithoutPassword(usernames, profile, manager);
        if (!(await this.store.insertLink({ idpId: provider.id, subject, userId: created.id, origin: 'created', createdAt: this.clock.now() }, manager))) throw new LinkedMeanwhile();
        await this.audit.record({ actor: `idp:${provider.id}`, action: 'user.created_from_upstream', subject: `user:${created.id}`, details: { idp: provider.id, username: created.username } }, manager);
        return created;
      });
      return { user, created: true };
    } catch (error) {
      // Two first sign-ins of the same person at once: the other one's account is theirs.
      if (!(error instanceof LinkedMeanwhile)) throw error;
      const user = await this.linkedPerson(provider.id, subject);
      return user ? { user, created: false } : null;
    }
  }

  /**
   * Links an upstream identity to a person: their own step after signing in here (`linked`) or an
   * administrator's (`admin`: users:link, POST /people/{id}/upstream-links, AdministratorProtection
   * checked first). True when the link was made, false when it was the person's already (nothing
   * audited then); upstream_link_taken when it is someone else's.
   */
  async link(idpId: string, subject: string, user: User, origin: Exclude<LinkOrigin, 'created'>, actor: AuditActor): Promise<boolean> {
    if (subject.length === 0 || subject.length > 255) throw new DomainError('invalid_identity_provider', 'The upstream subject must be 1 to 255 characters.');
    if (!(await this.store.find(idpId))) throw new DomainError('identity_provider_not_found', `No identity provider "${idpId}".`);
    const existing = await this.store.findLink(idpId, subject);
    if (existing && existing.userId === user.id) return false;
    if (existing) throw new DomainError('upstream_link_taken', `That ${idpId} identity is linked to another person already; unlink it there first.`);
    await this.transactions.run(async (manager) => {
      if (!(await this.store.insertLink({ idpId, subject, userId: user.id, origin, createdAt: this.clock.now() }, manager))) {
        throw new DomainError('upstream_link_taken', `That ${idpId} identity is linked to another person already; unlink it there first.`);
      }
      await this.audit.record({ actor, action: UPSTREAM_LINK_AUDIT.linked, subject: `user:${user.id}`, details: { idp: idpId, origin } }, manager);
    });
    return true;
  }

  /** Removes the person's link (audited as user.upstream_unlinked); upstream_link_not_found, with nothing changed, when they have no such link. */
  async unlink(idpId: string, subject: string, user: User, actor: AuditActor): Promise<void> {
    const removed = await this.transactions.run(async (manager) => {
      const count = await this.store.deleteLink(idpId, subject, user.id, manager);
      if (count > 0) await this.audit.record({ actor, action: UPSTREAM_LINK_AUDIT.unlinked, subject: `user:${user.id}`, details: { idp: idpId } }, manager);
      return count;
    });
    if (removed === 0) throw new DomainError('upstream_link_not_found', `${user.username} has no such link to ${idpId}`);
  }

  async linksOf(userId: string): Promise<UpstreamLinkView[]> {
    return (await this.store.linksOf(userId)).map((link) => ({
      idp: link.idpId,
      subject: link.subject,
      origin: link.origin,
      created_at: link.createdAt.toISOString(),
      last_sign_in_at: link.lastSignInAt?.toISOString() ?? null,
    }));
  }

  /**
   * Records a sign-in through the link (users:show's last_sign_in_at) and, in the same transaction,
   * makes the person's groups from this provider what its claims say now (UpstreamGroups), at every
   * sign-in, the first included.
   */
  async signedIn(provider: UpstreamProvider, subject: string, userId: string, claims: Record<string, unknown>): Promise<void> {
    await this.transactions.run(async (manager) => {
      await this.store.touchLink(provider.id, subject, this.clock.now(), manager);
      await this.groups.sync(provider, userId, claims, manager);
    });
  }

  private async linkedPerson(idpId: string, subject: string): Promise<User | null> {
    const link = await this.store.findLink(idpId, subject);
    return link ? this.users.findById(link.userId) : null;
  }
}

/**
 * The profile a just-in-time account starts with, through the provider's mapping. An address is
 * verified here only when the provider is trusted for it and (OpenID Connect) says so itself.
 * Values that do not fit our profile's rules are left out rather than refusing the person.
 */
export function mappedProfile(provider: UpstreamProvider, claims: Record<string, unknown>): { usernames: string[]; profile: ProfileChanges } {
  const { mapping, trustEmail, protocol } = provider.settings;
  const text = (name: string, max: number): string | undefined => {
    const value = claims[name];
    return typeof value === 'string' && value.trim() !== '' && value.length <= max && !/[\p{Cc}\u2028\u2029]/u.test(value) ? value.trim() : undefined;
  };
  const email = text(mapping.email, 254);
  const wellFormedEmail = email !== undefined && isEmail(email, { allow_display_name: false, require_tld: false }) ? email : undefined;
  const saysVerified = protocol === UPSTREAM_PROTOCOL.Saml || claims.email_verified === true;
  const profile: ProfileChanges = {
    email: wellFormedEmail ?? null,
    emailVerified: wellFormedEmail !== undefined && trustEmail && saysVerified,
    name: text(mapping.name, 200) ?? null,
    givenName: text(mapping.givenName, 100) ?? null,
    familyName: text(mapping.familyName, 100) ?? null,
  };
  const usernames = [text(mapping.username, 64), wellFormedEmail].filter((name): name is string => name !== undefined);
  return { usernames: usernames.length > 0 ? usernames : [provider.id], profile };
}
