import type { ScimError } from '../http/scim-error.js';
import { GROUP_RESOURCE, USER_RESOURCE } from '../schema/resource-types.js';
import { applyPatch } from './patch-applier.js';
import { parsePatchRequest } from './patch-request.js';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const patch = (resource: Record<string, unknown>, operations: unknown[], type = USER_RESOURCE) => applyPatch(resource, parsePatchRequest({ schemas: [PATCH_OP], Operations: operations }), type);

describe(applyPatch.name, () => {
  const user = { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], id: 'u1', userName: 'bjensen', active: true, name: { givenName: 'Barbara', familyName: 'Jensen' }, emails: [{ value: 'b@work.example', type: 'work', primary: true }] };

  it('replaces and adds through paths, whatever the case of op and names (Entra ID)', () => {
    expect(patch(user, [{ op: 'Replace', path: 'emails[type eq "work"].value', value: 'new@work.example' }, { op: 'Replace', path: 'NAME.familyname', value: 'J' }])).toMatchObject({ emails: [{ value: 'new@work.example', type: 'work' }], name: { givenName: 'Barbara', familyName: 'J' } });
    expect(patch(user, [{ op: 'Add', path: 'emails[type eq "home"].value', value: 'b@home.example' }]).emails).toEqual([...user.emails, { type: 'home', value: 'b@home.example' }]);
    expect(patch(user, [{ op: 'Replace', path: 'active', value: 'False' }]).active).toBe('False');
  });

  it('adds and replaces without a path: the value an object of attributes (Okta), keys as paths (Entra ID)', () => {
    expect(patch(user, [{ op: 'replace', value: { active: false, id: 'ignored' } }])).toMatchObject({ active: false, id: 'u1' });
    expect(patch(user, [{ op: 'add', value: { 'name.middleName': 'Q', [`${ENTERPRISE}:department`]: 'Sales', [ENTERPRISE]: { employeeNumber: '7' } } }])).toMatchObject({ name: { givenName: 'Barbara', middleName: 'Q' }, [ENTERPRISE]: { department: 'Sales', employeeNumber: '7' } });
  });

  it('takes the manager as a bare id or as an object', () => {
    expect(patch(user, [{ op: 'Add', path: `${ENTERPRISE}:manager`, value: 'm1' }])[ENTERPRISE]).toEqual({ manager: { value: 'm1' } });
    expect(patch(user, [{ op: 'replace', path: `${ENTERPRISE}:manager.value`, value: 'm2' }])[ENTERPRISE]).toEqual({ manager: { value: 'm2' } });
  });

  it('removes by path, by value filter, and a sub-attribute', () => {
    expect(patch(user, [{ op: 'remove', path: 'name.givenName' }]).name).toEqual({ familyName: 'Jensen' });
    expect(patch(user, [{ op: 'remove', path: 'emails[type eq "work"]' }]).emails).toEqual([]);
    expect(patch(user, [{ op: 'remove', path: 'emails' }]).emails).toBeUndefined();
  });

  it('adds members once, and removes them by filter or by value (Entra ID, Okta)', () => {
    const group = { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], id: 'g1', displayName: 'G', members: [{ value: 'a', type: 'User' }] };
    const added = patch(group, [{ op: 'Add', path: 'members', value: [{ $ref: null, value: 'a' }, { value: 'b' }] }], GROUP_RESOURCE);
    expect((added.members as { value: string }[]).map((member) => member.value)).toEqual(['a', 'b']);
    expect(patch(added, [{ op: 'remove', path: 'members[value eq "a"]' }], GROUP_RESOURCE).members).toEqual([{ value: 'b' }]);
    expect(patch(added, [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: 'b' }] }], GROUP_RESOURCE).members).toEqual([{ value: 'a', type: 'User' }]);
    expect(patch(added, [{ op: 'replace', path: 'members', value: [] }], GROUP_RESOURCE).members).toEqual([]);
  });

  it('leaves the original untouched (the request is atomic)', () => {
    const copy = structuredClone(user);
    expect(() => patch(user, [{ op: 'replace', path: 'userName', value: 'x' }, { op: 'replace', path: 'shoeSize', value: 1 }])).toThrow();
    expect(user).toEqual(copy);
  });

  it.each([
    [{ op: 'replace', path: 'groups', value: [] }, 'mutability'],
    [{ op: 'replace', path: 'meta.created', value: 'x' }, 'mutability'],
    [{ op: 'replace', path: 'emails[type eq "work" or type eq "home"].value', value: 'x' }, undefined],
    [{ op: 'replace', path: 'emails[type co "fax"].value', value: 'x' }, 'noTarget'],
    [{ op: 'replace', path: 'userName[value eq "x"]', value: 'x' }, 'invalidPath'],
    [{ op: 'add', value: 'not an object' }, 'invalidValue'],
    [{ op: 'replace', path: 'name', value: 'not an object' }, 'invalidValue'],
  ])('%j: %s', (operation, scimType) => {
    const run = () => patch(user, [operation]);
    if (scimType === undefined) expect(run).not.toThrow();
    else expect(run).toThrow(expect.objectContaining({ scimType }) as ScimError);
  });
});

describe(parsePatchRequest.name, () => {
  it.each([
    [{ Operations: [{ op: 'add', path: 'x', value: 1 }] }, 'invalidSyntax'],
    [{ schemas: [PATCH_OP], Operations: [] }, 'invalidSyntax'],
    [{ schemas: [PATCH_OP], Operations: [{ op: 'copy', path: 'x' }] }, 'invalidSyntax'],
    [{ schemas: [PATCH_OP], Operations: [{ op: 'remove' }] }, 'noTarget'],
    [{ schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'x' }] }, 'invalidValue'],
    [{ schemas: [PATCH_OP], Operations: [{ op: 'add', path: '', value: 1 }] }, 'invalidPath'],
  ])('refuses %j (%s)', (body, scimType) => {
    expect(() => parsePatchRequest(body)).toThrow(expect.objectContaining({ scimType }) as ScimError);
  });
});
