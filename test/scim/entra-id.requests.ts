/**
 * The requests Microsoft Entra ID's provisioning service sends, as "Tutorial: Develop and plan
 * provisioning for a SCIM endpoint in Microsoft Entra ID" (learn.microsoft.com, section "User
 * Operations" / "Group Operations") shows them, and the shapes its SCIM validator
 * (scimvalidator.microsoft.com) checks: capitalised ops, "False" as a string, a manager as a bare
 * id, members added and removed by value with "$ref": null, and the ADSCIM schema on groups.
 */
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

export const entra = {
  createUser: (userName: string, externalId: string, email: string) => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', ENTERPRISE],
    externalId,
    userName,
    active: true,
    emails: [{ primary: true, type: 'work', value: email }],
    meta: { resourceType: 'User' },
    name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
    roles: [],
  }),
  /** "Get User by query": userName eq, URL-encoded as Entra ID sends it. */
  filterByUserName: (userName: string) => `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`,
  /** "Update User [Multi-valued properties]". */
  updateMultiValued: () => ({
    schemas: [PATCH_OP],
    Operations: [
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
      { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
    ],
  }),
  /** "Update User [Single-valued properties]". */
  renameUser: (userName: string) => ({ schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'userName', value: userName }] }),
  /** The validator's "Patch User - Disable User": the boolean as the string "False". */
  disableUser: () => ({ schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] }),
  enableUser: () => ({ schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'active', value: 'True' }] }),
  /** The validator's enterprise attributes: Add with the URN path, the manager as a bare id. */
  addEnterprise: (managerId: string) => ({
    schemas: [PATCH_OP],
    Operations: [
      { op: 'Add', path: `${ENTERPRISE}:employeeNumber`, value: '701984' },
      { op: 'Add', path: `${ENTERPRISE}:department`, value: 'Tour Operations' },
      { op: 'Add', path: `${ENTERPRISE}:manager`, value: managerId },
    ],
  }),
  /** Add without a path: the value an object of attributes, keys written as paths. */
  addWithoutPath: () => ({ schemas: [PATCH_OP], Operations: [{ op: 'Add', value: { nickName: 'Babs', 'name.givenName': 'Barbara', title: 'Tour Guide' } }] }),
  createGroup: (displayName: string, externalId: string) => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group', 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/Group'],
    externalId,
    displayName,
    meta: { resourceType: 'Group' },
  }),
  /** "Get Group by displayName". */
  filterGroupByName: (displayName: string) => `/Groups?excludedAttributes=members&filter=${encodeURIComponent(`displayName eq "${displayName}"`)}`,
  renameGroup: (displayName: string) => ({ schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'displayName', value: displayName }] }),
  /** "Update Group [Add Members]". */
  addMembers: (...ids: string[]) => ({ schemas: [PATCH_OP], Operations: [{ op: 'Add', path: 'members', value: ids.map((value) => ({ $ref: null, value })) }] }),
  /** "Update Group [Remove Members]". */
  removeMembers: (...ids: string[]) => ({ schemas: [PATCH_OP], Operations: [{ op: 'Remove', path: 'members', value: ids.map((value) => ({ $ref: null, value })) }] }),
  /** The validator's member removal by filter. */
  removeMemberByFilter: (id: string) => ({ schemas: [PATCH_OP], Operations: [{ op: 'Remove', path: `members[value eq "${id}"]` }] }),
};
