import { Injectable } from '@nestjs/common';
import { UpstreamAccounts, type UpstreamLinkView } from '../../identity-providers/upstream-accounts.service.js';
import type { User } from '../../users/user.entity.js';
import { AdministratorProtection } from './administrator-protection.js';
import type { PeopleAdministrator } from './people-administrator.js';

/**
 * A person's links to upstream identity providers as an administrator makes and removes them
 * (issues 45 and 48): users:link and users:unlink, and the admin API's upstream-links routes, both
 * through here. A link lets whoever holds the upstream identity sign in as the person, so on an
 * administrator it is an owner's to make or remove (AdministratorProtection). UpstreamAccounts
 * keeps the rules of the link itself (the provider exists, one person per upstream identity) and
 * records the audit events, with the administrator and their address as the actor.
 */
@Injectable()
export class PersonUpstreamLinks {
  constructor(
    private readonly accounts: UpstreamAccounts,
    private readonly protection: AdministratorProtection,
  ) {}

  /** Every link of the person, by provider and subject: a person has one or two, so never paged. */
  linksOf(target: User): Promise<UpstreamLinkView[]> {
    return this.accounts.linksOf(target.id);
  }

  /** Links (audited as user.upstream_linked, origin `admin`); true when made, false when it was theirs already. */
  async link(by: PeopleAdministrator, target: User, idpId: string, subject: string): Promise<boolean> {
    await this.protection.assert(by, target, 'link_upstream');
    return this.accounts.link(idpId, subject, target, 'admin', by);
  }

  /** Unlinks (audited as user.upstream_unlinked); upstream_link_not_found when the person has no such link. */
  async unlink(by: PeopleAdministrator, target: User, idpId: string, subject: string): Promise<void> {
    await this.protection.assert(by, target, 'unlink_upstream');
    await this.accounts.unlink(idpId, subject, target, by);
  }
}
