import { Inject, Injectable } from '@nestjs/common';
import { AccountsService } from '../../accounts/accounts.service.js';
import { AuditService } from '../../audit/audit.service.js';
import { scimConfig, type ScimConfig } from '../../config/scim.config.js';
import { Transactions } from '../../database/transactions.js';
import type { ProfileChanges } from '../../users/user-profile.js';
import { UsersService, type ProvisionedUserChanges } from '../../users/users.service.js';
import type { Resource } from '../filter/resource-path.js';
import { assertIfMatch } from '../http/etag.js';
import { ScimError } from '../http/scim-error.js';
import { SCIM_INVITATIONS, type ScimInvitations } from '../invitations.js';
import { applyPatch } from '../patch/patch-applier.js';
import { parsePatchRequest } from '../patch/patch-request.js';
import { bodyAttributes } from '../resources/body-attributes.js';
import { USER_RESOURCE } from '../schema/resource-types.js';
import { SCIM_AUDIT, SCIM_TYPE } from '../scim.constants.js';
import { ScimUser } from './scim-user.entity.js';
import { userInput, type UserInput } from './user-input.js';
import { UserResources, type LoadedUser } from './user-resources.js';

/**
 * Users over SCIM (RFC 7644 §3.3, §3.5, §3.6): create, replace, patch and delete people. A PATCH is
 * applied to the representation and stored as a replacement, so both obey one set of rules.
 * `active: false` and DELETE go through AccountsService, which ends sessions (with back-channel
 * logout) and revokes tokens in the same transaction. `actor` is `client:<id>`.
 */
@Injectable()
export class ScimUsersService {
  constructor(
    private readonly users: UsersService,
    private readonly accounts: AccountsService,
    private readonly resources: UserResources,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    @Inject(SCIM_INVITATIONS) private readonly invitations: ScimInvitations,
    @Inject(scimConfig.KEY) private readonly config: ScimConfig,
  ) {}

  async create(body: Resource, actor: string): Promise<Resource> {
    const input = userInput(bodyAttributes(body, USER_RESOURCE));
    await this.assertManager(input.managerId, undefined);
    const user = await this.users.prepareProvisioned(input.userName, input.password, this.profileOf(input), input.active ?? true);
    await this.transactions.run(async (manager) => {
      await this.users.insertWithin(user, manager);
      await this.resources.extras.save(extraRow(user.id, input), manager);
      await this.audit.record({ actor, action: SCIM_AUDIT.userCreated, subject: `user:${user.id}`, details: { user_name: user.username, external_id: input.externalId, active: user.active } }, manager);
    });
    if (user.passwordHash === '' && user.email !== null && this.config.inviteWithoutPassword) await this.invitations.invite(user, actor);
    return (await this.resources.require(user.id)).representation;
  }

  async get(id: string): Promise<Resource> {
    return (await this.resources.require(id)).representation;
  }

  async replace(id: string, body: Resource, ifMatch: string | undefined, actor: string): Promise<Resource> {
    const current = await this.resources.require(id);
    assertIfMatch(ifMatch, current.representation);
    return this.store(current, userInput(bodyAttributes(body, USER_RESOURCE)), actor, SCIM_AUDIT.userReplaced);
  }

  async patch(id: string, body: Resource, ifMatch: string | undefined, actor: string): Promise<Resource> {
    const current = await this.resources.require(id);
    assertIfMatch(ifMatch, current.representation);
    const patched = applyPatch(current.representation, parsePatchRequest(body), USER_RESOURCE);
    return this.store(current, userInput(bodyAttributes(patched, USER_RESOURCE)), actor, SCIM_AUDIT.userPatched);
  }

  /** RFC 7644 §3.6: the person is deleted; their sessions end first, with back-channel logout (AccountsService). */
  async delete(id: string, ifMatch: string | undefined, actor: string): Promise<void> {
    const current = await this.resources.require(id);
    assertIfMatch(ifMatch, current.representation);
    await this.accounts.deleteUser(current.user.username, actor);
  }

  private async store(current: LoadedUser, input: UserInput, actor: string, action: string): Promise<Resource> {
    const { user } = current;
    await this.assertManager(input.managerId, user.id);
    const changes = await this.users.checkProvisioned(user.id, { username: input.userName === user.username ? undefined : input.userName, password: input.password, profile: this.profileOf(input) });
    // A new address is unverified unless the directory's addresses are trusted (as UsersService.updateProfile).
    if (changes.email !== undefined && changes.email !== user.email && changes.emailVerified === undefined) changes.emailVerified = false;
    if (changes.email === null) changes.emailVerified = false;
    const changed = Object.entries(changes).filter(([key, value]) => (user as unknown as Record<string, unknown>)[key] !== value);
    const row = extraRow(user.id, input);
    const extraChanged = JSON.stringify(comparable(row)) !== JSON.stringify(comparable(current.extra ?? extraRow(user.id, emptyInput())));
    const deactivating = input.active === false && user.active;
    const reactivating = input.active === true && !user.active;
    if (changed.length === 0 && !extraChanged && !deactivating && !reactivating) return current.representation;
    // One transaction for the whole request (RFC 7644 §3.5.2: a PATCH applies entirely or not at all), deprovisioning included.
    await this.transactions.run(async (manager) => {
      if (changed.length > 0 || extraChanged) {
        await this.users.updateProvisionedWithin(user.id, Object.fromEntries(changed) as ProvisionedUserChanges, manager);
        await this.resources.extras.save(row, manager);
        await this.audit.record({ actor, action, subject: `user:${user.id}`, details: { changed: [...changed.map(([key]) => key).filter((key) => key !== 'passwordHash'), ...(changes.passwordHash ? ['password'] : []), ...(extraChanged ? ['directory_attributes'] : [])] } }, manager);
      }
      // A password the directory set ends the person's sessions, as any password change does.
      if (changes.passwordHash !== undefined && !deactivating) await this.accounts.passwordReplacedWithin(user.id, manager);
      // RFC 7643 §4.1.1 active: deprovisioning ends sessions and revokes tokens (AccountsService, audited there).
      if (deactivating) await this.accounts.deactivateWithin(user, actor, manager);
      if (reactivating) await this.accounts.reactivateWithin(user, actor, manager);
    });
    return (await this.resources.require(user.id)).representation;
  }

  private profileOf(input: UserInput): ProfileChanges {
    return { ...input.profile, ...(input.profile.email !== null && this.config.emailsVerified ? { emailVerified: true } : {}) };
  }

  /** RFC 7643 §4.3 manager.value names a User here. */
  private async assertManager(managerId: string | null, _self: string | undefined): Promise<void> {
    if (managerId !== null && !(await this.resources.find(managerId))) throw ScimError.badRequest(SCIM_TYPE.invalidValue, `manager.value "${managerId}" is not the id of a User`);
  }
}

function extraRow(userId: string, input: UserInput): ScimUser {
  return Object.assign(new ScimUser(), { userId, externalId: input.externalId, employeeNumber: input.employeeNumber, department: input.department, managerId: input.managerId, attributes: input.attributes });
}

function comparable(row: ScimUser): unknown[] {
  return [row.externalId, row.employeeNumber, row.department, row.managerId, row.attributes];
}

function emptyInput(): UserInput {
  return { userName: '', profile: { email: null, name: null, givenName: null, familyName: null }, externalId: null, employeeNumber: null, department: null, managerId: null, attributes: {} };
}
