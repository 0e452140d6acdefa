/**
 * Issue 48: where a person is signed in, which applications hold access, and an invitation, through
 * the admin API. A session ended by an administrator ends as at sign-out: the browser is signed out
 * and the applications registered for back-channel logout are told (a real receiver gets the logout
 * token); withdrawing an application's access revokes its tokens, as the access page does; an
 * invitation arrives at a real SMTP server and is never returned to the administrator.
 */
import { decodeJwt } from 'jose';
import { UsersService } from '../../src/users/users.service.js';
import { AdminApi, signInThrough, stillSignedIn } from '../helpers/admin-api.js';
import { LogoutReceiver } from '../helpers/logout-receiver.js';
import { SmtpSink } from '../helpers/smtp-sink.js';
import { TestApp, type RegisteredClient, type TestUser } from '../helpers/test-app.js';

const ENV = { SMTP_TLS: 'none', MAIL_SERVICE_NAME: 'Latchkey Test', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' };

describe('admin API: a person\'s sessions, grants and invitation', () => {
  let smtp: SmtpSink;
  let app: TestApp;
  let admin: AdminApi;
  let rp: RegisteredClient;
  let other: RegisteredClient;
  const receiver = new LogoutReceiver();

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    await receiver.start();
    app = await TestApp.start({ ...ENV, SMTP_URL: smtp.url });
    admin = await AdminApi.setUp(app);
    rp = await app.createClient({ name: 'Notes', scope: 'openid notes:read', openId: { backchannel_logout_uri: receiver.url } });
    other = await app.createClient({ name: 'Calendar', scope: 'openid notes:read' });
  });
  afterAll(async () => {
    await app?.stop();
    await smtp?.stop();
    await receiver.stop();
    for (const name of [...Object.keys(ENV), 'SMTP_URL']) delete process.env[name];
  });

  /** A new person (who signs in, through signInThrough, where a test needs it). */
  const signedInPerson = async (): Promise<{ user: TestUser; id: string }> => {
    const user = await app.createUser();
    return { user, id: (await app.app.get(UsersService).require(user.username)).id };
  };

  it('lists the live sessions newest first with their applications, a page at a time; ends one as sign-out does, then all', async () => {
    const helpdesk = await admin.signIn(['helpdesk']);
    const { user, id } = await signedInPerson();
    const first = await signInThrough(app, rp, user, 'openid notes:read');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await signInThrough(app, other, user, 'openid notes:read');

    const page1 = await admin.request('GET', `/people/${id}/sessions?limit=1`, helpdesk.token);
    expect(page1.status).toBe(200);
    const [newest] = page1.body.items as { id: string; applications: { client_id: string; name: string }[] }[];
    expect(newest).toEqual({ id: expect.any(String), device: 'node', ip: '127.0.0.1', created_at: expect.any(String), expires_at: expect.any(String), applications: [{ client_id: other.clientId, name: 'Calendar', signed_in_at: expect.any(String) }] });
    const page2 = await admin.request('GET', String(page1.body.next).replace('/admin/api/v1', ''), helpdesk.token);
    const [older] = page2.body.items as { id: string; applications: { client_id: string }[] }[];
    expect(older.applications.map((a) => a.client_id)).toEqual([rp.clientId]);
    expect(page2.body.next).toBeNull();
    // The public id is neither the row id (the hash of the cookie's secret) nor the sid of the ID token.
    const rows = (await app.dataSource.query(`SELECT "id" FROM "sessions" WHERE "user_id" = '${id}'`)) as { id: string }[];
    const sid = decodeJwt(String(first.tokens.id_token)).sid as string;
    expect([...rows.map((row) => row.id), sid]).not.toContain(older.id);

    expect((await admin.request('DELETE', `/people/${id}/sessions/${older.id}`, helpdesk.token)).status).toBe(204);
    expect(await receiver.tokensFor(sid)).toHaveLength(1);
    expect(await stillSignedIn(first.browser)).toBe(false);
    expect(await stillSignedIn(second.browser)).toBe(true);
    expect((await admin.request('DELETE', `/people/${id}/sessions/${older.id}`, helpdesk.token)).status).toBe(404);
    expect((await admin.request('GET', `/people/${id}/sessions`, helpdesk.token)).body.items).toEqual([newest]);

    expect((await admin.request('DELETE', `/people/${id}/sessions`, helpdesk.token)).body).toEqual({ sessions_ended: 1 });
    expect(await stillSignedIn(second.browser)).toBe(false);
    expect((await admin.request('GET', `/people/${id}/sessions`, helpdesk.token)).body).toEqual({ items: [], next: null });
    const events = (await app.dataSource.query(`SELECT "actor", "action" FROM "audit_events" WHERE "subject" = 'user:${id}' ORDER BY "id"`)) as { actor: string; action: string }[];
    // The person's two sign-ins (issue 48: their security events), then the help desk's two changes.
    expect(events).toEqual([
      { actor: `user:${id}`, action: 'user.signed_in' },
      { actor: `user:${id}`, action: 'user.signed_in' },
      { actor: `user:${helpdesk.userId}`, action: 'session.ended' },
      { actor: `user:${helpdesk.userId}`, action: 'user.signed_out_everywhere' },
    ]);
  });

  it('lists the applications holding access, and withdraws one: the consent goes and that client\'s tokens for the person are revoked', async () => {
    const helpdesk = await admin.signIn(['helpdesk']);
    const { user, id } = await signedInPerson();
    await signInThrough(app, rp, user, 'openid notes:read');
    await signInThrough(app, other, user, 'notes:read');
    const listed = await admin.request('GET', `/people/${id}/grants?limit=1`, helpdesk.token);
    expect(listed.body.items).toEqual([{ client_id: expect.any(String), client_name: expect.any(String), scope: expect.any(Array), granted_at: expect.any(String), last_active_at: expect.any(String) }]);
    const rest = await admin.request('GET', String(listed.body.next).replace('/admin/api/v1', ''), helpdesk.token);
    const all = [...(listed.body.items as { client_id: string }[]), ...(rest.body.items as { client_id: string }[])].map((g) => g.client_id);
    expect(all).toEqual([rp.clientId, other.clientId].sort());
    expect(rest.body.next).toBeNull();

    expect((await admin.request('DELETE', `/people/${id}/grants/${other.clientId}`, helpdesk.token)).status).toBe(204);
    const remaining = await admin.request('GET', `/people/${id}/grants`, helpdesk.token);
    expect((remaining.body.items as { client_id: string }[]).map((g) => g.client_id)).toEqual([rp.clientId]);
    const live = (await app.dataSource.query(`SELECT "client_id" FROM "tokens" WHERE "user_id" = '${id}' AND "revoked_at" IS NULL`)) as { client_id: string }[];
    expect(new Set(live.map((row) => row.client_id))).toEqual(new Set([rp.clientId]));
    expect((await admin.request('DELETE', `/people/${id}/grants/${other.clientId}`, helpdesk.token)).status).toBe(404);
    const [event] = (await app.dataSource.query(`SELECT "actor", "ip", "details" FROM "audit_events" WHERE "action" = 'consent.withdrawn' AND "subject" = 'client:${other.clientId}'`)) as { actor: string; ip: string; details: string }[];
    expect({ actor: event.actor, ip: event.ip, details: JSON.parse(event.details) as unknown }).toEqual({ actor: `user:${helpdesk.userId}`, ip: '127.0.0.1', details: { user_id: id, tokens_revoked: expect.any(Number) } });
  });

  it('emails an invitation to a person without a password (202), never returning the link; refuses one who has a password (409)', async () => {
    const helpdesk = await admin.signIn(['helpdesk']);
    const created = await admin.request('POST', '/people', helpdesk.token, { username: `ines_${Date.now().toString(36)}`, email: 'ines@example.org' });
    expect(created.body.has_password).toBe(false);
    const invited = await admin.request('POST', `/people/${String(created.body.id)}/invitation`, helpdesk.token);
    expect(invited.status).toBe(202);
    expect(invited.body).toEqual({ email: 'ines@example.org', expires_at: expect.any(String) });
    const mail = await smtp.waitFor('ines@example.org');
    expect(mail.subject).toBe('You are invited to Latchkey Test');
    expect(JSON.stringify(invited.body)).not.toContain('/invitation?token=');

    const { user, id } = await signedInPerson();
    await app.app.get(UsersService).updateProfile(user.username, { email: 'jon@example.org' });
    const refused = await admin.request('POST', `/people/${id}/invitation`, helpdesk.token);
    expect([refused.status, refused.body.error, refused.body.error_description]).toEqual([409, 'conflict', expect.stringMatching(/already has a password/)]);
  });
});
