/**
 * The requests Okta sends, as its "SCIM 2.0 SPEC Test" Runscope suite (developer.okta.com, "Test
 * your SCIM API") and its provisioning guide ("SCIM 2.0 protocol reference") show them: plain
 * application/json on create, startIndex/count on every listing, a password on create, PUT as a
 * full replacement, deactivation as a PATCH without a path, groups with members by value and display.
 */
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** The Runscope suite's request headers. */
export const OKTA_HEADERS = { 'Accept-Charset': 'utf-8', Accept: 'application/scim+json', 'User-Agent': 'OKTA SCIM Integration' };

export const okta = {
  listOne: '/Users?count=1&startIndex=1',
  filterByUserName: (userName: string) => `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}&startIndex=1&count=100`,
  /** "Create Okta user with realistic values" (sent as application/json). */
  createUser: (userName: string, givenName: string, familyName: string, email: string) => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName,
    name: { givenName, familyName },
    emails: [{ primary: true, value: email, type: 'work' }],
    displayName: `${givenName} ${familyName}`,
    active: true,
  }),
  /** The protocol reference's create, with a password, an externalId, a locale and empty groups. */
  createUserWithPassword: (userName: string, externalId: string) => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName,
    name: { givenName: 'Test', familyName: 'User' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    displayName: 'Test User',
    locale: 'en-US',
    externalId,
    groups: [],
    password: '1mz050nq',
    active: true,
  }),
  /** "Update a specific user (PUT)": the whole user again, with changes. */
  replaceUser: (id: string, userName: string, externalId: string) => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    id,
    userName,
    name: { givenName: 'Another', familyName: 'User' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    displayName: 'Another User',
    locale: 'en-US',
    externalId,
    groups: [],
    active: true,
    meta: { resourceType: 'User' },
  }),
  deactivate: () => ({ schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { active: false } }] }),
  reactivate: () => ({ schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { active: true } }] }),
  listGroups: '/Groups?startIndex=1&count=100',
  createGroup: (displayName: string) => ({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName, members: [] }),
  replaceGroup: (id: string, displayName: string, members: { value: string; display: string }[]) => ({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], id, displayName, members }),
  /** Rename: a PATCH without a path, the id echoed in the value. */
  renameGroup: (id: string, displayName: string) => ({ schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { id, displayName } }] }),
  addMember: (value: string, display: string) => ({ schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value, display }] }] }),
  removeMember: (value: string) => ({ schemas: [PATCH_OP], Operations: [{ op: 'remove', path: `members[value eq "${value}"]` }] }),
};
