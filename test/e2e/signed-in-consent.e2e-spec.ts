/**
 * Issue 47: GET /authorize reads the session, its person, their consent and the session's record of
 * the client in one statement (ConsentStore.signedIn, ConsentsService.signedInConsenting). It must
 * answer exactly what the separate lookups did (SessionStore.isLive, UserStore.findById, the consent
 * covering the scope), and refuse a deactivated person, on SQLite and PostgreSQL. POST /consent
 * widens the consent from that statement's read, without reading it again.
 */
import { randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { AuditEvent } from '../../src/audit/audit-event.entity.js';
import { Consent } from '../../src/consents/consent.entity.js';
import { ConsentsService } from '../../src/consents/consents.service.js';
import { SessionClient } from '../../src/sessions/session-client.entity.js';
import type { Session } from '../../src/sessions/session.entity.js';
import { SessionStore } from '../../src/sessions/session.store.js';
import { User } from '../../src/users/user.entity.js';
import { Browser, isLoginPage } from '../helpers/browser.js';
import { authorizeAsUser, authorizeUrl, redirectParams } from '../helpers/oauth-flow.js';
import { statementsSentDuring } from '../helpers/statements-sent.js';
import { TestApp, type RegisteredClient } from '../helpers/test-app.js';

describe(ConsentsService.name, () => {
  let app: TestApp;
  let appA: RegisteredClient;
  let appB: RegisteredClient;
  let person: User;
  let other: User;
  const now = new Date('2030-06-01T12:00:00.000Z');
  const session = (id: string, userId: string, expiresAt: string, endedAt: string | null = null): Session => ({
    id,
    userId,
    publicId: randomUUID(),
    createdAt: new Date('2030-06-01T11:00:00.000Z'),
    expiresAt: new Date(expiresAt),
    endedAt: endedAt === null ? null : new Date(endedAt),
    ip: null,
    device: null,
  });
  const LIVE = 'a'.repeat(64);
  const EXPIRING_NOW = 'b'.repeat(64);
  const EXPIRED = 'c'.repeat(64);
  const ENDED = 'd'.repeat(64);
  const OTHERS = 'e'.repeat(64);

  const signedIn = (sessionId: string, userId: string, clientId: string, scope: string[]) => app.app.get(ConsentsService).signedInConsenting(sessionId, userId, clientId, scope);
  const setActive = (userId: string, active: boolean) => app.dataSource.getRepository(User).update(userId, { active });

  beforeAll(async () => {
    app = await TestApp.start();
    appA = await app.createClient({ scope: 'notes:read notes:write' });
    appB = await app.createClient({ scope: 'notes:read notes:write' });
    const users = app.dataSource.getRepository(User);
    person = await users.findOneByOrFail({ username: (await app.createUser()).username });
    other = await users.findOneByOrFail({ username: (await app.createUser()).username });
    const sessions = app.app.get(SessionStore);
    await sessions.insert(session(LIVE, person.id, '2030-06-02T00:00:00.000Z'));
    await sessions.insert(session(EXPIRING_NOW, person.id, '2030-06-01T12:00:00.000Z'));
    await sessions.insert(session(EXPIRED, person.id, '2030-06-01T11:59:59.999Z'));
    await sessions.insert(session(ENDED, person.id, '2030-06-02T00:00:00.000Z', '2030-06-01T11:30:00.000Z'));
    await sessions.insert(session(OTHERS, other.id, '2030-06-02T00:00:00.000Z'));
    // The person allowed app B only notes:read; app A nothing yet.
    await app.app.get(ConsentsService).grant(person.id, appB.clientId, ['notes:read']);
    jest.spyOn(app.clock, 'now').mockReturnValue(now);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await app?.stop();
  });

  it("answers the live session's person as the users table holds them, consenting to what their consent covers", async () => {
    const found = await signedIn(LIVE, person.id, appB.clientId, ['notes:read']);
    expect(found).not.toBeNull();
    expect(found!.user).toBeInstanceOf(User);
    expect(found!.user).toEqual(await app.dataSource.getRepository(User).findOneByOrFail({ id: person.id }));
    expect(found!.user.active).toBe(true);
    expect(found!.consented).toBe(true);
    // A request narrower than the consent is covered as well as an equal one; the empty scope too.
    expect((await signedIn(LIVE, person.id, appB.clientId, []))!.consented).toBe(true);
  });

  it('does not count a consent narrower than the request, a consent for another client, or none, as consenting; the person is still signed in', async () => {
    const wider = await signedIn(LIVE, person.id, appB.clientId, ['notes:read', 'notes:write']);
    expect(wider).toMatchObject({ user: { id: person.id }, consented: false });
    const otherClient = await signedIn(LIVE, person.id, appA.clientId, ['notes:read']);
    expect(otherClient).toMatchObject({ user: { id: person.id }, consented: false });
    const unknownClient = await signedIn(LIVE, person.id, 'no-such-client', []);
    expect(unknownClient).toMatchObject({ user: { id: person.id }, consented: false });
    // Another person's consent for the same client is not theirs.
    await app.app.get(ConsentsService).grant(other.id, appA.clientId, ['notes:read']);
    expect((await signedIn(LIVE, person.id, appA.clientId, ['notes:read']))!.consented).toBe(false);
    expect((await signedIn(OTHERS, other.id, appA.clientId, ['notes:read']))!.consented).toBe(true);
  });

  it('signs nobody in for a session that expired, ended, is unknown or is another person’s; one expiring at this very instant still counts', async () => {
    expect(await signedIn(EXPIRING_NOW, person.id, appB.clientId, ['notes:read'])).toMatchObject({ user: { id: person.id }, consented: true });
    expect(await signedIn(EXPIRED, person.id, appB.clientId, ['notes:read'])).toBeNull();
    expect(await signedIn(ENDED, person.id, appB.clientId, ['notes:read'])).toBeNull();
    expect(await signedIn('f'.repeat(64), person.id, appB.clientId, ['notes:read'])).toBeNull();
    expect(await signedIn(OTHERS, person.id, appB.clientId, ['notes:read'])).toBeNull();
    expect(await signedIn(LIVE, other.id, appB.clientId, ['notes:read'])).toBeNull();
  });

  it('signs nobody in for a deactivated person whose session is still live, and the same person again once reactivated', async () => {
    await setActive(person.id, false);
    try {
      expect(await signedIn(LIVE, person.id, appB.clientId, ['notes:read'])).toBeNull();
    } finally {
      await setActive(person.id, true);
    }
    expect(await signedIn(LIVE, person.id, appB.clientId, ['notes:read'])).toMatchObject({ user: { id: person.id, active: true }, consented: true });
  });

  it("says whether the client signed the person in through this session already, for that session and client only", async () => {
    expect((await signedIn(LIVE, person.id, appA.clientId, []))!.clientRecorded).toBe(false);
    await app.app.get(SessionStore).recordClient(LIVE, appA.clientId, now);
    expect((await signedIn(LIVE, person.id, appA.clientId, []))!.clientRecorded).toBe(true);
    expect((await signedIn(LIVE, person.id, appB.clientId, []))!.clientRecorded).toBe(false);
    expect((await signedIn(OTHERS, other.id, appA.clientId, []))!.clientRecorded).toBe(false);
    // Told the pair is there, recordClient writes nothing; told it is not, it writes it once (ON CONFLICT DO NOTHING).
    await app.app.get(SessionStore).recordClient(LIVE, appB.clientId, now, true);
    expect(await app.dataSource.getRepository(SessionClient).countBy({ sessionId: LIVE, clientId: appB.clientId })).toBe(0);
    await app.app.get(SessionStore).recordClient(LIVE, appA.clientId, now, false);
    expect(await app.dataSource.getRepository(SessionClient).countBy({ sessionId: LIVE, clientId: appA.clientId })).toBe(1);
  });

  it('grants from a stale read by reading again: merged with what the row holds, in the same row, and never bringing back a withdrawn scope', async () => {
    const client = await app.createClient({ scope: 'openid notes:read notes:write' });
    const consents = app.app.get(ConsentsService);
    const rows = () => app.dataSource.getRepository(Consent).findBy({ userId: person.id, clientId: client.clientId });
    const given = () => app.dataSource.getRepository(AuditEvent).countBy({ action: 'consent.given', subject: `client:${client.clientId}` });

    await consents.grant(person.id, client.clientId, ['notes:read'], { current: null });
    const [first] = await rows();
    expect(first).toMatchObject({ scope: 'notes:read' });
    // Told there is no consent when another grant wrote one meanwhile: the INSERT leaves it, and the retry widens it.
    await consents.grant(person.id, client.clientId, ['notes:write'], { current: null });
    expect(await rows()).toEqual([expect.objectContaining({ id: first.id, scope: 'notes:read notes:write' })]);
    // Told an older scope: the conditional UPDATE misses, and the retry merges with the row as it is now, narrowing nothing.
    await consents.grant(person.id, client.clientId, ['openid'], { current: 'notes:read' });
    expect(await rows()).toEqual([expect.objectContaining({ id: first.id, scope: 'notes:read notes:write openid' })]);
    // Nothing new allowed (as the caller read it): nothing written, nothing audited.
    await consents.grant(person.id, client.clientId, ['notes:read'], { current: 'notes:read' });
    expect(await rows()).toEqual([expect.objectContaining({ id: first.id, scope: 'notes:read notes:write openid' })]);
    expect(await given()).toBe(3);

    // Withdrawn between the read and the write: only what this grant allowed is written, not what the person took away.
    await app.dataSource.getRepository(Consent).delete({ id: first.id });
    await consents.grant(person.id, client.clientId, ['notes:write'], { current: 'notes:read openid' });
    expect(await rows()).toEqual([expect.objectContaining({ scope: 'notes:write' })]);
    expect(await given()).toBe(4);
  });
});

describe('GET /authorize for a signed-in person (one statement)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await TestApp.start();
  });
  afterAll(async () => app?.stop());

  it('approves a consented request at once, asks again for a wider one, and signs a person deactivated behind a live session out', async () => {
    const client = await app.createClient({ scope: 'openid notes:read notes:write' });
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    const first = await authorizeAsUser(browser, user, authorizeUrl(client, { scope: 'openid notes:read', state: 's1' }));
    expect(redirectParams(first).get('code')).toBeTruthy();

    // Consented: straight back with a code, for the same scope or a narrower one, prompt=none included.
    for (const params of [{ scope: 'openid notes:read' }, { scope: 'notes:read' }, { scope: 'notes:read', prompt: 'none' }]) {
      const page = await browser.get(authorizeUrl(client, { ...params, state: 's2' }));
      expect(page.status).toBe(302);
      expect(redirectParams(page).get('code')).toBeTruthy();
    }
    // Wider than the consent: the consent page, or consent_required under prompt=none.
    expect((await browser.get(authorizeUrl(client, { scope: 'notes:read notes:write' }))).body).toContain('action="/consent"');
    expect(redirectParams(await browser.get(authorizeUrl(client, { scope: 'notes:read notes:write', prompt: 'none' }))).get('error')).toBe('consent_required');

    // Deactivated by a change that did not end the session (the race a sign-in can win against users:deactivate): nobody is signed in.
    // People are not kept per instance, so there is no notification to wait for.
    const userId = (await app.dataSource.getRepository(User).findOneByOrFail({ username: user.username })).id;
    await app.dataSource.getRepository(User).update(userId, { active: false });
    expect(isLoginPage(await browser.get(authorizeUrl(client, { scope: 'notes:read' })))).toBe(true);
    expect(redirectParams(await browser.get(authorizeUrl(client, { scope: 'notes:read', prompt: 'none' }))).get('error')).toBe('login_required');
  });

  it('POST /consent reads the session the same way: a consent form sent after the person was deactivated behind a live session issues no code', async () => {
    const client = await app.createClient({ scope: 'openid notes:read notes:write' });
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    expect(redirectParams(await authorizeAsUser(browser, user, authorizeUrl(client, { scope: 'notes:read' }))).get('code')).toBeTruthy();
    const consentPage = await browser.get(authorizeUrl(client, { scope: 'openid notes:read notes:write', state: 'wider' }));
    expect(consentPage.body).toContain('action="/consent"');

    const userId = (await app.dataSource.getRepository(User).findOneByOrFail({ username: user.username })).id;
    await app.dataSource.getRepository(User).update(userId, { active: false });
    const answer = await browser.submit(consentPage, '/consent', { decision: 'allow' });
    // Sent to sign in again (which a deactivated person cannot), never back to the client with a code.
    expect(answer.location ?? '').not.toContain('code=');
    expect(isLoginPage(answer.status === 200 ? answer : await browser.get(answer.location!))).toBe(true);
    const consents = (await app.dataSource.query(`SELECT "scope" FROM "consents" WHERE "user_id" = '${userId}' AND "client_id" = '${client.clientId}'`)) as { scope: string }[];
    expect(consents.map((row) => row.scope)).toEqual(['notes:read']);
  });

  it('POST /consent widens the consent in place and reads it only in its signed-in statement; an answer allowing nothing new writes nothing', async () => {
    const client = await app.createClient({ scope: 'openid notes:read notes:write' });
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    expect(redirectParams(await authorizeAsUser(browser, user, authorizeUrl(client, { scope: 'notes:read' }))).get('code')).toBeTruthy();
    const userId = (await app.dataSource.getRepository(User).findOneByOrFail({ username: user.username })).id;
    const rows = () => app.dataSource.getRepository(Consent).findBy({ userId, clientId: client.clientId });
    const given = () => app.dataSource.getRepository(AuditEvent).countBy({ action: 'consent.given', subject: `client:${client.clientId}` });
    const [first] = await rows();

    // Another scope alone: the answer adds it to what the person allowed before, in the same row.
    const consentPage = await browser.get(authorizeUrl(client, { scope: 'notes:write', state: 'other' }));
    expect(consentPage.body).toContain('action="/consent"');
    let answer = consentPage;
    const sent = await statementsSentDuring(app.dataSource, async () => (answer = await browser.submit(consentPage, '/consent', { decision: 'allow' })));
    expect(redirectParams(answer).get('code')).toBeTruthy();
    expect(await rows()).toEqual([expect.objectContaining({ id: first.id, scope: 'notes:read notes:write' })]);
    expect(await given()).toBe(2);
    // The consent was read with the session (ConsentStore.signedIn joins it) and not again; it was written once.
    const onConsents = sent.filter((sql) => sql.includes('"consents"'));
    expect(onConsents.filter((sql) => /^\s*SELECT/i.test(sql))).toEqual([expect.stringContaining('LEFT JOIN "consents"')]);
    expect(onConsents.filter((sql) => sql.includes('FROM "consents"'))).toEqual([]);
    expect(onConsents.filter((sql) => /^\s*(INSERT|UPDATE)/i.test(sql))).toHaveLength(1);

    // prompt=consent asks again for what the person allowed already: allowing it writes and audits nothing.
    const askedAgain = await browser.get(authorizeUrl(client, { scope: 'notes:read', prompt: 'consent', state: 'again' }));
    expect(askedAgain.body).toContain('action="/consent"');
    const sentAgain = await statementsSentDuring(app.dataSource, async () => (answer = await browser.submit(askedAgain, '/consent', { decision: 'allow' })));
    expect(redirectParams(answer).get('code')).toBeTruthy();
    expect(sentAgain.filter((sql) => sql.includes('"consents"') && !/^\s*SELECT/i.test(sql))).toEqual([]);
    expect(await rows()).toEqual([expect.objectContaining({ id: first.id, scope: 'notes:read notes:write' })]);
    expect(await given()).toBe(2);
  });
});
