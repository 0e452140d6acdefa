import { randomUUID } from 'node:crypto';
import { TestApp } from '../helpers/test-app.js';
import { entra, PATCH_OP } from '../scim/entra-id.requests.js';
import { okta } from '../scim/okta.requests.js';
import { provisioningClient, ScimConnector, type Json } from '../scim/scim-client.js';

/** Malformed input gets RFC 7644 §3.12's error shape with the right status and scimType, never a 500; paging, sorting, projection, ETags. */
describe('SCIM errors, filters, paging and versions', () => {
  let app: TestApp;
  let scim: ScimConnector;
  let user: Json;

  beforeAll(async () => {
    app = await TestApp.start({ SCIM_MAX_RESULTS: '3' });
    scim = new ScimConnector(app, (await provisioningClient(app)).token);
    for (const [index, name] of ['carol', 'alice', 'dave', 'bob', 'erin'].entries()) {
      const created = await scim.post('/Users', { ...entra.createUser(`${name}.${index}`, `ext-${name}`, `${name}@example.com`), name: { givenName: name, familyName: 'Tester' } });
      if (name === 'alice') user = created.body;
    }
  });
  afterAll(async () => app?.stop());

  const q = (filter: string): string => `/Users?filter=${encodeURIComponent(filter)}`;

  it.each([
    ['POST /Users, not JSON', () => scim.post('/Users', '{"userName":'), 400, 'invalidSyntax'],
    ['POST /Users, an array', () => scim.post('/Users', '[]'), 400, 'invalidSyntax'],
    ['POST /Users, no schemas', () => scim.post('/Users', { userName: 'x1' }), 400, 'invalidSyntax'],
    ['POST /Users, no userName', () => scim.post('/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'] }), 400, 'invalidValue'],
    ['POST /Users, an unknown attribute', () => scim.post('/Users', { ...entra.createUser('x2', 'x', 'x@example.com'), shoeSize: 42 }), 400, 'invalidSyntax'],
    ['POST /Users, active not a boolean', () => scim.post('/Users', { ...entra.createUser('x3', 'x', 'x@example.com'), active: 'perhaps' }), 400, 'invalidValue'],
    ['POST /Users, a userName we cannot hold', () => scim.post('/Users', entra.createUser('has space', 'x', 'x@example.com')), 400, 'invalidValue'],
    ['POST /Users, a bad email', () => scim.post('/Users', entra.createUser('x4', 'x', 'not an address')), 400, 'invalidValue'],
    ['POST /Users, a short password', () => scim.post('/Users', { ...entra.createUser('x5', 'x', 'x@example.com'), password: 'short' }), 400, 'invalidValue'],
    ['POST /Users, a duplicate userName in another case', () => scim.post('/Users', entra.createUser('ALICE.1', 'x', 'x@example.com')), 409, 'uniqueness'],
    ['POST /Users, a manager who is no one', () => scim.post('/Users', { ...entra.createUser('x6', 'x', 'x@example.com'), 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { manager: { value: randomUUID() } } }), 400, 'invalidValue'],
    ['a filter that does not parse', () => scim.get(q('userName eq')), 400, 'invalidFilter'],
    ['a filter with an unknown operator', () => scim.get(q('userName like "a"')), 400, 'invalidFilter'],
    ['a filter on an unknown attribute', () => scim.get(q('shoeSize eq "42"')), 400, 'invalidFilter'],
    ['a filter comparing a boolean with gt', () => scim.get(q('active gt true')), 400, 'invalidFilter'],
    ['a filter with an unclosed bracket', () => scim.get(q('emails[type eq "work"')), 400, 'invalidFilter'],
    ['a sortBy on an unknown attribute', () => scim.get('/Users?sortBy=shoeSize'), 400, 'invalidValue'],
    ['a count that is no number', () => scim.get('/Users?count=ten'), 400, 'invalidValue'],
    ['PATCH without Operations', () => scim.patch(`/Users/${user.id}`, { schemas: [PATCH_OP] }), 400, 'invalidSyntax'],
    ['PATCH with an unknown op', () => scim.patch(`/Users/${user.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'move', path: 'userName', value: 'x' }] }), 400, 'invalidSyntax'],
    ['PATCH remove without a path', () => scim.patch(`/Users/${user.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove' }] }), 400, 'noTarget'],
    ['PATCH a path to an unknown attribute', () => scim.patch(`/Users/${user.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'shoeSize', value: 1 }] }), 400, 'invalidPath'],
    ['PATCH a read-only attribute', () => scim.patch(`/Users/${user.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'groups', value: [] }] }), 400, 'mutability'],
    ['PATCH a malformed path', () => scim.patch(`/Users/${user.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'emails[type eq', value: 'x' }] }), 400, 'invalidPath'],
    ['PATCH userName onto a taken one', () => scim.patch(`/Users/${user.id}`, entra.renameUser('bob.3')), 409, 'uniqueness'],
    ['PATCH a group with a member who is no one', async () => scim.patch(`/Groups/${(await scim.post('/Groups', entra.createGroup(`g ${randomUUID()}`, 'x'))).body.id}`, entra.addMembers(randomUUID())), 400, 'invalidValue'],
    ['POST /Groups with a taken displayName', async () => { const name = `dup ${randomUUID()}`; await scim.post('/Groups', entra.createGroup(name, 'x')); return scim.post('/Groups', entra.createGroup(name, 'y')); }, 409, 'uniqueness'],
  ])('%s', async (_name, send, status, scimType) => {
    const response = await send();
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: String(status), scimType, detail: expect.any(String) });
  });

  it('answers 404 for resources that are not there, and 415 for another media type', async () => {
    for (const path of [`/Users/${randomUUID()}`, '/Users/not-an-id', `/Groups/${randomUUID()}`, '/Schemas/urn:nothing', '/ResourceTypes/Printer']) expect((await scim.request('GET', path, undefined, {}, 'none')).status).toBe(404);
    expect((await scim.request('POST', '/Users', 'userName=x', { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(415);
  });

  it('filters with every operator, attribute paths, and/or/not, and dates', async () => {
    const names = async (filter: string): Promise<string[]> => ((await scim.get(`${q(filter)}&sortBy=userName`)).body.Resources as Json[]).map((resource) => resource.userName as string);
    expect(await names('userName sw "a" or userName ew ".4"')).toEqual(['alice.1', 'erin.4']);
    expect(await names('name.givenName co "AR" and not (userName eq "carol.0")')).toEqual([]);
    expect(await names('name.givenName co "ar"')).toEqual(['carol.0']);
    // Four match; a page holds filter.maxResults (3 here).
    expect(await names('emails[type eq "work" and value ew "@example.com"] and userName ne "alice.1"')).toEqual(['bob.3', 'carol.0', 'dave.2']);
    expect((await scim.get(q('emails[type eq "work" and value ew "@example.com"] and userName ne "alice.1"'))).body.totalResults).toBe(4);
    expect(await names('emails.value eq "DAVE@example.com"')).toEqual(['dave.2']);
    expect(await names('externalId eq "ext-bob"')).toEqual(['bob.3']);
    expect(await names('externalId eq "EXT-BOB"')).toEqual([]);
    expect(await names('title pr')).toEqual([]);
    expect(await names('meta.created gt "2000-01-01T00:00:00Z" and meta.lastModified lt "2999-01-01T00:00:00Z" and userName le "b"')).toEqual(['alice.1']);
    expect(await names('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "erin.4"')).toEqual(['erin.4']);
  });

  it('pages with startIndex and count, never beyond filter.maxResults, and sorts', async () => {
    const page = await scim.get('/Users?sortBy=name.givenName&sortOrder=descending&startIndex=2&count=2');
    expect(page.body).toMatchObject({ totalResults: 5, startIndex: 2, itemsPerPage: 2 });
    expect(page.body.Resources.map((resource: Json) => resource.name.givenName)).toEqual(['dave', 'carol']);
    expect((await scim.get('/Users?count=50')).body.itemsPerPage).toBe(3);
    expect((await scim.get('/Users?count=0')).body).toMatchObject({ totalResults: 5, itemsPerPage: 0, Resources: [] });
    expect((await scim.get('/Users?startIndex=99')).body).toMatchObject({ totalResults: 5, itemsPerPage: 0 });
  });

  it('returns the attributes asked for, or all but those excluded', async () => {
    const only = await scim.request('GET', `/Users/${user.id}?attributes=userName,name.familyName`, undefined, {}, 'none');
    expect(only.body).toEqual({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], id: user.id, userName: 'alice.1', name: { familyName: 'Tester' } });
    const without = await scim.get(`/Users/${user.id}?excludedAttributes=emails,name`);
    expect(without.body.emails).toBeUndefined();
    expect(without.body.name).toBeUndefined();
    expect(without.body.userName).toBe('alice.1');
  });

  it('writes only at the version named in If-Match, else 412', async () => {
    const current = await scim.get(`/Users/${user.id}`);
    const etag = current.headers.get('etag')!;
    expect(etag).toBe(current.body.meta.version);
    const stale = '"not-the-version"';
    const refused = await scim.patch(`/Users/${user.id}`, entra.updateMultiValued(), { 'if-match': stale });
    expect(refused.status).toBe(412);
    expect((await scim.get(`/Users/${user.id}`)).body.meta.version).toBe(etag);
    const changed = await scim.patch(`/Users/${user.id}`, okta.deactivate(), { 'if-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.body.meta.version).not.toBe(etag);
    expect((await scim.put(`/Users/${user.id}`, { ...entra.createUser('alice.1', 'ext-alice', 'alice@example.com'), active: true }, { 'if-match': etag })).status).toBe(412);
    expect((await scim.delete(`/Users/${user.id}`, { 'if-match': etag })).status).toBe(412);
  });
});
