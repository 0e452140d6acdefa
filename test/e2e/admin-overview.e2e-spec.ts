/**
 * Issue 48: GET /admin/api/v1/overview, the admin console dashboard's counts: for every
 * administrator (numbers only), refused without a token, without an admin scope, and to a person
 * whose role is gone.
 */
import { AdminRolesService } from '../../src/admin/admin-roles.service.js';
import { AdminApi } from '../helpers/admin-api.js';
import { TestApp } from '../helpers/test-app.js';

describe('GET /admin/api/v1/overview', () => {
  let app: TestApp;
  let admin: AdminApi;

  beforeAll(async () => {
    app = await TestApp.start();
    admin = await AdminApi.setUp(app);
  });
  afterAll(async () => {
    await app.stop();
  });

  it('answers every role the counts of people, active people, clients and live sessions', async () => {
    const helpdesk = await admin.signIn(['helpdesk']);
    const before = await admin.request('GET', '/overview', helpdesk.token);
    expect(before.status).toBe(200);
    expect(before.headers.get('cache-control')).toBe('no-store');
    await app.createUser();
    await app.createClient();
    const after = await admin.request('GET', '/overview', helpdesk.token);
    const counts = (response: typeof before) => response.body as { people: { total: number; active: number }; clients: { total: number }; sessions: { live: number } };
    expect(counts(after).people.total).toBe(counts(before).people.total + 1);
    expect(counts(after).people.active).toBe(counts(before).people.active + 1);
    expect(counts(after).clients.total).toBe(counts(before).clients.total + 1);
    expect(counts(after).sessions.live).toBeGreaterThanOrEqual(1);
    for (const role of ['auditor', 'client-admin', 'owner'] as const) {
      expect((await admin.request('GET', '/overview', (await admin.signIn([role])).token)).status).toBe(200);
    }
  });

  it('is refused without a token (401), without an admin scope (403), and once the role is gone (403)', async () => {
    expect((await admin.request('GET', '/overview')).status).toBe(401);
    const nobody = await admin.signIn([]);
    expect((await admin.request('GET', '/overview', nobody.token)).body.error).toBe('insufficient_scope');
    const auditor = await admin.signIn(['auditor']);
    await app.app.get(AdminRolesService).revoke(auditor.userId, 'auditor', 'cli');
    const refused = await admin.request('GET', '/overview', auditor.token);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('insufficient_scope');
  });
});
