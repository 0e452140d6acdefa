/**
 * Issue 48: the audit log over the admin API, read by every administrator. Each filter (actor,
 * event or event prefix, person, client, since, until) narrows the result to exactly the events it
 * names; pages follow newest first through equal times; the JSON-lines export holds every matching
 * event, past any page limit; malformed filters and cursors are 400s; `audit:list` answers the same
 * filters with the same events; no row carries a secret.
 */
import { randomUUID } from 'node:crypto';
import { AuditEvent } from '../../src/audit/audit-event.entity.js';
import { ClientsService } from '../../src/clients/clients.service.js';
import { AdminApi, ADMIN_API } from '../helpers/admin-api.js';
import { adminCallers, allPages, expectDescribedAs, type AdminCallers } from '../helpers/admin-system-api.js';
import { runCli } from '../helpers/cli.js';
import { TestApp } from '../helpers/test-app.js';

const PERSON = randomUUID();
const OTHER = randomUUID();
const WINDOW = 'since=2001-01-01T00:00:00Z&until=2002-01-01T00:00:00Z';

/** Events of 2001, before anything the tests do: [name, second, actor, action, subject]. Two share a second. */
const SEEDED: [string, number, string, string, string][] = [
  ['registered', 1, `user:${OTHER}`, 'client.registered', 'client:c1'],
  ['updated', 2, `user:${OTHER}`, 'client.updated', 'client:c1'],
  ['deleted', 3, 'cli', 'client.deleted', 'client:c2'],
  ['consent', 4, `user:${PERSON}`, 'consent.given', 'client:c1'],
  ['listed', 5, 'cli', 'clients.listed', 'client:c2'],
  ['bare', 5, 'cli', 'client', 'client:c2'],
  ['signed_out', 6, `user:${PERSON}`, 'user.signed_out_everywhere', `user:${PERSON}`],
  ['factor', 6, `user:${OTHER}`, 'factor.removed', `user:${PERSON}`],
];

describe('admin API: the audit log', () => {
  let app: TestApp;
  let admin: AdminApi;
  let callers: AdminCallers;
  const ids = new Map<string, string>();
  const names = new Map<string, string>();

  /** The seeded events a query answers (within 2001 unless it names its own window), by name, in the order given. */
  const query = async (filters: string, token = callers.auditor): Promise<string[]> => {
    const response = await admin.request('GET', `/audit-events?${filters.includes('since=') ? '' : `${WINDOW}&`}${filters}`, token);
    expect(response.status).toBe(200);
    return (response.body.items as { id: string }[]).map((event) => names.get(event.id) ?? event.id);
  };

  beforeAll(async () => {
    app = await TestApp.start();
    admin = await AdminApi.setUp(app);
    callers = await adminCallers(admin);
    // UUIDv7-like ids in time order, so that the two events of one second are ordered by id.
    const rows = SEEDED.map(([name, second, actor, action, subject], index) => {
      const id = `0000e${String(index).padStart(3, '0')}-0000-7000-8000-000000000000`;
      ids.set(name, id);
      names.set(id, name);
      return { id, at: new Date(Date.UTC(2001, 0, 1, 0, 0, second)), actor, ip: null, action, subject, details: { seeded: name } };
    });
    rows.push({ id: randomUUID(), at: new Date(Date.UTC(2002, 5, 1)), actor: `user:${OTHER}`, ip: null, action: 'client.registered', subject: 'client:c1', details: { seeded: 'later' } });
    await app.dataSource.getRepository(AuditEvent).insert(rows);
  });

  afterAll(async () => {
    await app.stop();
  });

  it('lists every event of the window newest first, by time then id', async () => {
    expect(await query('')).toEqual(['factor', 'signed_out', 'bare', 'listed', 'consent', 'deleted', 'updated', 'registered']);
  });

  it.each([
    ['actor', `actor=user:${OTHER}`, ['factor', 'updated', 'registered']],
    ['an exact event', 'event=client.updated', ['updated']],
    ['an event prefix, which neither clients. nor client matches', 'event=client.', ['deleted', 'updated', 'registered']],
    ['a person (the subject)', `person=${PERSON}`, ['factor', 'signed_out']],
    ['a client (the subject)', 'client=c1', ['consent', 'updated', 'registered']],
    ['since (inclusive) and until (exclusive)', 'since=2001-01-01T00:00:03Z&until=2001-01-01T01:00:06%2B01:00', ['bare', 'listed', 'consent', 'deleted']],
    ['several filters at once', `actor=user:${OTHER}&event=client.`, ['updated', 'registered']],
    ['a person nobody touched', `person=${randomUUID()}`, []],
  ])('narrows to exactly the events of %s', async (_, filters, expected) => {
    expect(await query(filters)).toEqual(expected);
  });

  it('pages through the window, two at a time, across the events of one second, with next as a field', async () => {
    const { items, pages } = await allPages(admin, `/audit-events?${WINDOW}&limit=2`, callers.auditor);
    expect(items.map((event) => names.get(event.id as string))).toEqual(await query(''));
    expect(pages).toBe(4);
    expect(items[0]).toEqual({ id: ids.get('factor'), at: '2001-01-01T00:00:06.000Z', actor: `user:${OTHER}`, ip: null, action: 'factor.removed', subject: `user:${PERSON}`, details: { seeded: 'factor' } });
  });

  it.each([
    ['a date alone', 'since=2001-01-01'],
    ['no offset', 'since=2001-01-01T00:00:00'],
    ['31 February', 'until=2001-02-31T00:00:00Z'],
    ['words', 'since=yesterday'],
    ['since after until', 'since=2001-06-01T00:00:00Z&until=2001-01-01T00:00:00Z'],
    ['a malformed person', 'person=alice'],
    ['an event with a space', 'event=client%20registered'],
    ['a filter given twice', 'actor=cli&actor=cli'],
    ['an unknown parameter', 'evnt=client.'],
    ['a cursor not issued here', 'cursor=bm90LWEtY3Vyc29y'],
    ['a forged cursor', `cursor=${Buffer.from(JSON.stringify(['2001-01-01T00:00:06.000Z', 'not-a-uuid'])).toString('base64url')}`],
    ['a cursor with no time', `cursor=${Buffer.from(JSON.stringify(['yesterday', randomUUID()])).toString('base64url')}`],
    ['a limit of 0', 'limit=0'],
  ])('refuses %s with 400 invalid_request', async (_, filters) => {
    for (const path of ['/audit-events', '/audit-events/export']) {
      if (path.endsWith('export') && /cursor|limit/.test(filters)) continue;
      const response = await admin.request('GET', `${path}?${filters}`, callers.auditor);
      expect({ path, filters, status: response.status, error: response.body.error }).toEqual({ path, filters, status: 400, error: 'invalid_request' });
    }
  });

  it('exports every matching event as JSON lines, past the page limit, read in batches', async () => {
    const actor = `client:bulk-${Date.now()}`;
    const rows = Array.from({ length: 650 }, (_, i) => ({ id: randomUUID(), at: new Date(Date.UTC(2003, 0, 1, 0, 0, 0, i)), actor, ip: null, action: 'token.revoked', subject: `token:${i}`, details: {} }));
    for (let i = 0; i < rows.length; i += 100) await app.dataSource.getRepository(AuditEvent).insert(rows.slice(i, i + 100));
    const response = await fetch(app.url(`${ADMIN_API}/audit-events/export?actor=${encodeURIComponent(actor)}`), { headers: { authorization: `Bearer ${callers.auditor}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-ndjson');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const lines = (await response.text()).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => (JSON.parse(line) as { subject: string }).subject)).toEqual(rows.map((row) => row.subject).reverse());
  });

  it('exports the filtered events, the same as the list', async () => {
    const response = await fetch(app.url(`${ADMIN_API}/audit-events/export?${WINDOW}&event=client.`), { headers: { authorization: `Bearer ${callers.helpdesk}` } });
    const events = (await response.text()).trim().split('\n').map((line) => JSON.parse(line) as { id: string });
    expect(events.map((event) => names.get(event.id))).toEqual(['deleted', 'updated', 'registered']);
  });

  it('is read by every administrator, by nobody else', async () => {
    for (const token of [callers.auditor, callers.helpdesk, callers.clientAdmin, callers.owner]) expect(await query(`person=${PERSON}`, token)).toEqual(['factor', 'signed_out']);
    for (const path of ['/audit-events', '/audit-events/export']) {
      expect((await admin.request('GET', path)).status).toBe(401);
      expect((await admin.request('GET', path, callers.nobody)).status).toBe(403);
      expect((await admin.request('GET', path, callers.demoted)).status).toBe(403);
      await expectDescribedAs(admin, 'GET', path, 'audit', 'read');
    }
  });

  it('audit:list takes the same filters and prints the same events', async () => {
    const filters = ['--actor', `user:${OTHER}`, '--event', 'client.', '--since', '2001-01-01T00:00:00Z', '--until', '2002-01-01T00:00:00Z'];
    const cli = await runCli(['audit:list', ...filters]);
    expect(cli.stderr).toBe('');
    expect((JSON.parse(cli.stdout) as { id: string }[]).map((event) => names.get(event.id))).toEqual(await query(`actor=user:${OTHER}&event=client.`));
    const person = JSON.parse((await runCli(['audit:list', '--person', PERSON, '--limit', '1'])).stdout) as { id: string }[];
    expect(person.map((event) => names.get(event.id))).toEqual(['factor']);
    const malformed = await runCli(['audit:list', '--since', '2001-01-01']);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(/since must be an RFC 3339 date-time/);
  });

  it('holds no secret: not a client secret, a password or a token the tests used', async () => {
    const { client, secret } = await app.app.get(ClientsService).create({ name: 'Audited', redirectUris: ['http://localhost:8080/callback'], scope: 'notes:read' });
    const { secret: rotated } = await app.app.get(ClientsService).rotateSecret(client.id);
    const response = await fetch(app.url(`${ADMIN_API}/audit-events/export`), { headers: { authorization: `Bearer ${callers.owner}` } });
    const text = await response.text();
    expect(text).toContain(`client:${client.id}`);
    for (const value of [secret!, rotated, 'correct horse battery staple', callers.owner, callers.auditor]) expect(text).not.toContain(value);
  });
});
