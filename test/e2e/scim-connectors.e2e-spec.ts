import { randomUUID } from 'node:crypto';
import { TestApp } from '../helpers/test-app.js';
import { ENTERPRISE, entra } from '../scim/entra-id.requests.js';
import { OKTA_HEADERS, okta } from '../scim/okta.requests.js';
import { provisioningClient, ScimConnector, type Json } from '../scim/scim-client.js';

/**
 * The provisioning sequences of the two connectors enterprises use most, replayed against
 * /scim/v2 as their public documentation shows them (test/scim/*.requests.ts); every response is
 * checked against the RFC 7643 schemas by Ajv (test/scim/schemas), which the server never uses.
 */
describe('SCIM 2.0 connectors (RFC 7643, RFC 7644)', () => {
  let app: TestApp;
  let scim: ScimConnector;

  beforeAll(async () => {
    app = await TestApp.start();
    scim = new ScimConnector(app, (await provisioningClient(app)).token);
  });
  afterAll(async () => app?.stop());

  describe('Microsoft Entra ID', () => {
    it('creates, finds, updates, disables and deletes a user', async () => {
      const userName = `Test_User_${randomUUID()}`;
      const created = await scim.post('/Users', entra.createUser(userName, randomUUID(), `Test_User_${randomUUID()}@testuser.com`));
      expect(created.status).toBe(201);
      expect(created.headers.get('location')).toBe(created.body.meta.location);
      expect(created.headers.get('etag')).toBe(created.body.meta.version);
      expect(created.body).toMatchObject({ userName, active: true, name: { givenName: 'givenName', familyName: 'familyName', formatted: 'givenName familyName' } });
      const id = created.body.id as string;

      expect((await scim.get(`/Users/${id}`)).body.userName).toBe(userName);
      const found = await scim.get(entra.filterByUserName(userName));
      expect(found.body).toMatchObject({ totalResults: 1, Resources: [{ id, userName }] });
      expect((await scim.get(entra.filterByUserName('non-existent user'))).body.totalResults).toBe(0);

      const updated = await scim.patch(`/Users/${id}`, entra.updateMultiValued());
      expect(updated.status).toBe(200);
      expect(updated.body.emails).toEqual([{ primary: true, type: 'work', value: 'updatedEmail@microsoft.com' }]);
      expect(updated.body.name.familyName).toBe('updatedFamilyName');

      const renamed = `${randomUUID()}@testuser.com`;
      expect((await scim.patch(`/Users/${id}`, entra.renameUser(renamed))).body.userName).toBe(renamed);
      expect((await scim.get(entra.filterByUserName(renamed))).body.totalResults).toBe(1);

      expect((await scim.patch(`/Users/${id}`, entra.addWithoutPath())).body).toMatchObject({ nickName: 'Babs', title: 'Tour Guide', name: { givenName: 'Barbara' } });

      const disabled = await scim.patch(`/Users/${id}`, entra.disableUser());
      expect(disabled.body.active).toBe(false);
      // The validator's check: a filtered GET of the disabled user shows active false.
      expect((await scim.get(entra.filterByUserName(renamed))).body.Resources[0].active).toBe(false);
      expect((await scim.patch(`/Users/${id}`, entra.enableUser())).body.active).toBe(true);

      expect((await scim.delete(`/Users/${id}`)).status).toBe(204);
      expect((await scim.get(`/Users/${id}`)).status).toBe(404);
    });

    it('keeps the enterprise extension: employeeNumber, department and the manager', async () => {
      const manager = await scim.post('/Users', entra.createUser(`mgr_${randomUUID()}`, randomUUID(), 'manager@example.com'));
      const report = await scim.post('/Users', entra.createUser(`rep_${randomUUID()}`, randomUUID(), 'report@example.com'));
      const patched = await scim.patch(`/Users/${report.body.id}`, entra.addEnterprise(manager.body.id));
      expect(patched.status).toBe(200);
      expect(patched.body.schemas).toContain(ENTERPRISE);
      expect(patched.body[ENTERPRISE]).toMatchObject({ employeeNumber: '701984', department: 'Tour Operations', manager: { value: manager.body.id } });
      const byDepartment = await scim.get(`/Users?filter=${encodeURIComponent(`${ENTERPRISE}:department eq "tour operations"`)}`);
      expect(byDepartment.body.Resources.map((user: Json) => user.id)).toEqual([report.body.id]);
      // Deleting the manager clears the reference (ON DELETE SET NULL).
      expect((await scim.delete(`/Users/${manager.body.id}`)).status).toBe(204);
      expect((await scim.get(`/Users/${report.body.id}`)).body[ENTERPRISE].manager).toBeUndefined();
    });

    it('creates a group, finds it by displayName, renames it, adds and removes members, deletes it', async () => {
      const [alice, bob] = await Promise.all(['alice', 'bob'].map((name) => scim.post('/Users', entra.createUser(`${name}_${randomUUID()}`, randomUUID(), `${name}@example.com`))));
      const group = await scim.post('/Groups', entra.createGroup(`displayName ${randomUUID()}`, randomUUID()));
      expect(group.status).toBe(201);
      const id = group.body.id as string;
      const get = await scim.get(`/Groups/${id}?excludedAttributes=members`);
      expect(get.body).toMatchObject({ id, displayName: group.body.displayName });
      expect((await scim.get(entra.filterGroupByName(group.body.displayName))).body).toMatchObject({ totalResults: 1, Resources: [{ id }] });

      const newName = `${randomUUID()}updatedDisplayName`;
      expect((await scim.patch(`/Groups/${id}`, entra.renameGroup(newName))).body.displayName).toBe(newName);

      const added = await scim.patch(`/Groups/${id}`, entra.addMembers(alice.body.id, bob.body.id));
      expect(added.body.members.map((member: Json) => member.value).sort()).toEqual([alice.body.id, bob.body.id].sort());
      expect((await scim.get(`/Users/${alice.body.id}`)).body.groups).toEqual([expect.objectContaining({ value: id, display: newName, type: 'direct' })]);
      expect((await scim.get(`/Groups?filter=${encodeURIComponent(`members[value eq "${bob.body.id}"]`)}`)).body.totalResults).toBe(1);

      expect((await scim.patch(`/Groups/${id}`, entra.removeMembers(alice.body.id))).body.members).toEqual([expect.objectContaining({ value: bob.body.id, type: 'User' })]);
      const emptied = await scim.patch(`/Groups/${id}`, entra.removeMemberByFilter(bob.body.id));
      expect(emptied.body.members).toBeUndefined();

      expect((await scim.delete(`/Groups/${id}`)).status).toBe(204);
      expect((await scim.get(`/Groups/${id}`)).status).toBe(404);
    });
  });

  describe('Okta', () => {
    const okta2 = (): ScimConnector => new ScimConnector(app, scim.token, OKTA_HEADERS);

    it('passes the SCIM 2.0 spec test steps', async () => {
      const connector = okta2();
      const seeded = await connector.post('/Users', okta.createUser(`seed.${randomUUID()}@example.com`, 'Seed', 'Person', 'seed@example.com'));
      const first = await connector.get(okta.listOne);
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ itemsPerPage: 1, startIndex: 1 });
      expect(first.body.totalResults).toBeGreaterThanOrEqual(1);
      const listed = first.body.Resources[0];
      for (const value of [listed.id, listed.name.familyName, listed.name.givenName, listed.userName, listed.emails[0].value]) expect(value).toBeTruthy();
      expect(typeof listed.active).toBe('boolean');
      expect((await connector.get(`/Users/${seeded.body.id}`)).body.id).toBe(seeded.body.id);

      expect((await connector.get(okta.filterByUserName(`invalid.${randomUUID()}@example.com`))).body.totalResults).toBe(0);
      const missing = await connector.get('/Users/00919288221112222');
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ status: '404', detail: expect.any(String) });

      const userName = `Okta.User.${randomUUID().slice(0, 8)}@example.com`;
      const created = await connector.request('POST', '/Users', okta.createUser(userName, 'Given', 'Family', userName), { 'content-type': 'application/json', accept: 'application/scim+json; charset=utf-8' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ active: true, userName, name: { givenName: 'Given', familyName: 'Family' } });
      expect((await connector.get(`/Users/${created.body.id}`)).body.userName).toBe(userName);

      const again = await connector.request('POST', '/Users', okta.createUser(userName, 'Given', 'Family', userName), { 'content-type': 'application/json' });
      expect(again.status).toBe(409);
      expect(again.body.scimType).toBe('uniqueness');
      // RFC 7643 §4.1.1: userName is case-insensitive.
      expect((await connector.get(okta.filterByUserName(userName.toUpperCase()))).body.Resources.map((user: Json) => user.id)).toEqual([created.body.id]);
      expect((await connector.get('/Groups')).status).toBe(200);

      const unauthorized = await new ScimConnector(app, 'non-token', OKTA_HEADERS).request('GET', okta.filterByUserName(userName), undefined, { authorization: 'non-token' });
      expect(unauthorized.status).toBe(401);
      expect(unauthorized.body).toMatchObject({ status: '401', detail: expect.any(String) });
    });

    it('creates with a password, replaces with PUT, deactivates and reactivates with PATCH', async () => {
      const connector = okta2();
      const userName = `test.user.${randomUUID().slice(0, 8)}@okta.local`;
      const created = await connector.post('/Users', okta.createUserWithPassword(userName, '00ujl29u0le5T6Aj10h7'));
      expect(created.status).toBe(201);
      expect(JSON.stringify(created.body)).not.toContain('1mz050nq');
      expect(created.body).toMatchObject({ externalId: '00ujl29u0le5T6Aj10h7', locale: 'en-US', displayName: 'Test User' });
      const id = created.body.id as string;
      expect((await connector.get(okta.filterByUserName(userName))).body).toMatchObject({ totalResults: 1, startIndex: 1 });
      expect((await connector.get(`/Users?filter=${encodeURIComponent('externalId eq "00ujl29u0le5T6Aj10h7"')}`)).body.Resources[0].id).toBe(id);

      const replaced = await connector.put(`/Users/${id}`, okta.replaceUser(id, userName, '00ujl29u0le5T6Aj10h7'));
      expect(replaced.status).toBe(200);
      expect(replaced.body).toMatchObject({ name: { givenName: 'Another', familyName: 'User' }, displayName: 'Another User' });

      expect((await connector.patch(`/Users/${id}`, okta.deactivate())).body.active).toBe(false);
      expect((await connector.patch(`/Users/${id}`, okta.reactivate())).body.active).toBe(true);
    });

    it('creates, lists, replaces, renames, changes the members of and deletes a group', async () => {
      const connector = okta2();
      const user = await connector.post('/Users', okta.createUser(`member.${randomUUID()}@example.com`, 'Mem', 'Ber', 'member@example.com'));
      const name = `Test SCIMv2 ${randomUUID().slice(0, 8)}`;
      const group = await connector.post('/Groups', okta.createGroup(name));
      expect(group.status).toBe(201);
      const id = group.body.id as string;
      expect((await connector.get(okta.listGroups)).body.Resources.map((g: Json) => g.id)).toContain(id);
      expect((await connector.get(`/Groups/${id}`)).body.displayName).toBe(name);

      const replaced = await connector.put(`/Groups/${id}`, okta.replaceGroup(id, name, [{ value: user.body.id, display: user.body.userName }]));
      expect(replaced.body.members).toEqual([expect.objectContaining({ value: user.body.id, type: 'User' })]);
      expect((await connector.patch(`/Groups/${id}`, okta.renameGroup(id, `${name} renamed`))).body.displayName).toBe(`${name} renamed`);
      expect((await connector.patch(`/Groups/${id}`, okta.removeMember(user.body.id))).body.members).toBeUndefined();
      expect((await connector.patch(`/Groups/${id}`, okta.addMember(user.body.id, user.body.userName))).body.members).toHaveLength(1);
      expect((await connector.delete(`/Groups/${id}`)).status).toBe(204);
    });
  });

  describe('discovery (RFC 7644 §4)', () => {
    it('describes what it supports, its resource types and its schemas', async () => {
      const config = await scim.request('GET', '/ServiceProviderConfig', undefined, {}, 'config');
      expect(config.body).toMatchObject({ patch: { supported: true }, bulk: { supported: false }, filter: { supported: true, maxResults: 100 }, sort: { supported: true }, etag: { supported: true } });
      const types = await scim.request('GET', '/ResourceTypes', undefined, {}, 'resourceType');
      expect(types.body.Resources.map((type: Json) => type.endpoint)).toEqual(['/Users', '/Groups']);
      const schemas = await scim.request('GET', '/Schemas', undefined, {}, 'schema');
      expect(schemas.body.Resources.map((schema: Json) => schema.id)).toEqual(['urn:ietf:params:scim:schemas:core:2.0:User', ENTERPRISE, 'urn:ietf:params:scim:schemas:core:2.0:Group']);
      expect((await scim.request('GET', `/Schemas/${ENTERPRISE}`, undefined, {}, 'schema')).body.name).toBe('EnterpriseUser');
    });
  });
});
