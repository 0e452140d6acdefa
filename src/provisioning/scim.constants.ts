/** The scope a directory connector's client holds to provision people and groups (RFC 7644 §2). */
export const SCIM_SCOPE = 'scim';

/** RFC 7644 §8.1: the media type of SCIM messages. */
export const SCIM_MEDIA_TYPE = 'application/scim+json';

/** RFC 7643 §8.7.1, RFC 7644 §3.12, §3.4.2, §3.5.2: the schema URIs this service provider speaks. */
export const SCHEMA = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  enterpriseUser: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
  listResponse: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patchOp: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
} as const;

/** RFC 7644 §3.12, Table 9: the scimType values of a 400 (and 409's uniqueness). */
export const SCIM_TYPE = {
  invalidFilter: 'invalidFilter',
  tooMany: 'tooMany',
  uniqueness: 'uniqueness',
  mutability: 'mutability',
  invalidSyntax: 'invalidSyntax',
  invalidPath: 'invalidPath',
  noTarget: 'noTarget',
  invalidValue: 'invalidValue',
  invalidVers: 'invalidVers',
  sensitive: 'sensitive',
} as const;

export type ScimType = (typeof SCIM_TYPE)[keyof typeof SCIM_TYPE];

/** Audit actions of provisioning (AuditService). */
export const SCIM_AUDIT = {
  userCreated: 'scim.user.created',
  userReplaced: 'scim.user.replaced',
  userPatched: 'scim.user.patched',
  userDeactivated: 'scim.user.deactivated',
  userReactivated: 'scim.user.reactivated',
  userDeleted: 'scim.user.deleted',
  groupCreated: 'scim.group.created',
  groupReplaced: 'scim.group.replaced',
  groupPatched: 'scim.group.patched',
  groupDeleted: 'scim.group.deleted',
} as const;
