/**
 * Issue 43, finding 3: a cloned passkey got in by retrying. A copy's counter climbs with each try,
 * so a refusal that leaves the credential usable only delays it. WebAuthn §6.1.1 leaves the policy
 * to the relying party; ours: once a copy is detected, the credential signs nobody in, neither the
 * copy nor the original, until the person removes it and enrols again or an administrator removes
 * it. The refusal says why only after a valid signature, that is to whoever holds the key.
 */
import { jest } from '@jest/globals';
import { PasskeyStore } from '../../src/factors/passkey.store.js';
import { PasskeysService } from '../../src/passkeys/passkeys.service.js';
import { runCli } from '../helpers/cli.js';
import { PasskeyTestApp } from '../helpers/passkeys.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';

jest.setTimeout(180_000);

const BLOCKED = /^a copy was detected on \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('a cloned passkey is blocked once the copy is detected (WebAuthn §6.1.1, §7.2 step 21)', () => {
  let app: PasskeyTestApp;
  let rpId: string;

  beforeAll(async () => {
    // Generous failures: every refusal below counts as a failed sign-in of the address.
    app = await PasskeyTestApp.start({ LOGIN_FREE_FAILURES: '50', LOGIN_IP_FREE_FAILURES: '200', PASSKEY_CEREMONIES_PER_MINUTE: '1000' });
    rpId = new URL(app.origin).hostname;
  });
  afterAll(async () => {
    await app?.stop();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  /** A person with one passkey, added from a password sign-in. */
  async function owner() {
    const user = await app.createUser();
    const authenticator = new SoftAuthenticator(rpId, app.origin);
    expect((await app.addPasskey(await app.signedIn(user), authenticator, 'Laptop')).status).toBe(200);
    const [passkey] = await app.nest.get(PasskeysService).listFor(user.id);
    return { user, authenticator, passkeyId: passkey.id };
  }

  /** A sign-in with the passkey alone, from a fresh browser: its status, its JSON answer, and the browser. */
  async function signIn(authenticator: SoftAuthenticator, overrides: Parameters<SoftAuthenticator['assert']>[1] = {}) {
    const browser = app.browser();
    const { answer } = await app.passkeySignIn(browser, authenticator, overrides);
    return { status: answer.status, body: JSON.parse(answer.body) as Record<string, string>, browser };
  }

  async function signedIn(browser: ReturnType<PasskeyTestApp['browser']>): Promise<boolean> {
    return (await browser.get('/account')).body.includes('You are signed in');
  }

  /** The person's passkey.* audit events, oldest first. */
  async function passkeyEvents(userId: string): Promise<{ action: string; actor: string; details: Record<string, unknown> }[]> {
    const rows = (await app.dataSource.query(`SELECT "action", "actor", "details" FROM "audit_events" WHERE "subject" = 'user:${userId}' AND "action" LIKE 'passkey.%' ORDER BY "id"`)) as {
      action: string;
      actor: string;
      details: unknown;
    }[];
    return rows.map((row) => ({ ...row, details: (typeof row.details === 'string' ? JSON.parse(row.details) : row.details) as Record<string, unknown> }));
  }

  /** A person whose passkey was used once, copied, used again, then presented by the copy: blocked. */
  async function blockedOwner() {
    const found = await owner();
    expect((await signIn(found.authenticator)).status).toBe(200);
    const clone = found.authenticator.clone();
    expect((await signIn(found.authenticator)).status).toBe(200);
    expect((await signIn(clone)).status).toBe(403);
    return { ...found, clone };
  }

  async function cliJson<T = Record<string, unknown>>(args: string[]): Promise<T> {
    const result = await runCli(args);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(result.stdout) as T;
  }

  it('the reproduction: a copy taken at counter 1 is refused on every try, its counter climbing, and the original is refused from then on', async () => {
    const { user, authenticator, passkeyId } = await owner();
    expect((await signIn(authenticator)).status).toBe(200);
    const clone = authenticator.clone();
    expect((await signIn(authenticator)).status).toBe(200);
    expect((await signIn(authenticator)).status).toBe(200);

    // The copy presents 2, 3, then 4: past the stored 3 on its third try.
    const tries = [await signIn(clone), await signIn(clone), await signIn(clone)];
    expect(tries.map((t) => t.status)).toEqual([403, 403, 403]);
    for (const t of tries) {
      expect(t.body).toMatchObject({ error: 'passkey_blocked' });
      expect(t.body.error_description).toMatch(/a copy of this passkey was detected on \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
      expect(await signedIn(t.browser)).toBe(false);
    }
    // The original holds the same key: nothing tells it from the copy, so it is refused too.
    const original = await signIn(authenticator);
    expect(original.status).toBe(403);
    expect(original.body).toMatchObject({ error: 'passkey_blocked' });
    expect(await signedIn(original.browser)).toBe(false);

    const [row] = await app.nest.get(PasskeyStore).listFor(user.id);
    expect(row.counter).toBe(3);
    expect(row.clonedAt).toBeInstanceOf(Date);
    const events = await passkeyEvents(user.id);
    expect(events.map((e) => e.action)).toEqual([
      'passkey.added',
      'passkey.signed_in',
      'passkey.signed_in',
      'passkey.signed_in',
      'passkey.cloned_authenticator',
      'passkey.sign_in_refused',
      'passkey.sign_in_refused',
      'passkey.sign_in_refused',
    ]);
    expect(events[4].details).toMatchObject({ passkey: passkeyId, stored_counter: 3, presented_counter: 2 });
    expect(events.slice(5).map((e) => e.details)).toEqual([3, 4, 4].map((presented) => ({ passkey: passkeyId, reason: 'blocked', cloned_at: row.clonedAt!.toISOString(), presented_counter: presented })));
  });

  it('the detection ends every session of the person: the copy may have signed in before the original gave it away', async () => {
    const { user, authenticator } = await owner();
    const clone = authenticator.clone();
    // The copy is used first: counter 1, nothing to compare it with yet.
    const thief = await signIn(clone);
    expect(thief.status).toBe(200);
    const withPassword = await app.signedIn(user);
    expect(await signedIn(thief.browser)).toBe(true);

    // The original then presents 1 as well: the detection.
    expect((await signIn(authenticator)).status).toBe(403);
    expect(await signedIn(thief.browser)).toBe(false);
    expect(await signedIn(withPassword)).toBe(false);
    const detection = (await passkeyEvents(user.id)).find((e) => e.action === 'passkey.cloned_authenticator');
    // The session the passkey was added from, the copy's and the password's.
    expect(detection?.details).toMatchObject({ stored_counter: 1, presented_counter: 1, sessions_ended: 3 });
  });

  it('two uses racing: when the counter moved between the check and the write, the loser blocks the credential', async () => {
    const { user, authenticator } = await owner();
    expect((await signIn(authenticator)).status).toBe(200);
    const clone = authenticator.clone();
    // The copy's sign-in reads the row (counter 1) and is held there while the original signs in (counter 2).
    const store = app.nest.get(PasskeyStore);
    const read = store.findByCredentialId.bind(store);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const wasRead = new Promise<void>((resolve) => (reached = resolve));
    jest.spyOn(store, 'findByCredentialId').mockImplementationOnce(async (credentialId: string) => {
      const row = await read(credentialId);
      reached();
      await held;
      return row;
    });
    const copyAttempt = signIn(clone);
    await wasRead;
    const original = await signIn(authenticator);
    expect(original.status).toBe(200);
    release();
    // The copy presents 2, more than the 1 it read: only the write can see that it lost.
    const copy = await copyAttempt;
    expect(copy.status).toBe(403);
    expect(copy.body).toMatchObject({ error: 'passkey_blocked' });
    expect(await signedIn(copy.browser)).toBe(false);
    expect(await signedIn(original.browser)).toBe(false);
    expect((await signIn(authenticator)).status).toBe(403);
    const [row] = await store.listFor(user.id);
    expect(row.counter).toBe(2);
    expect(row.clonedAt).toBeInstanceOf(Date);
    expect((await passkeyEvents(user.id)).filter((e) => e.action === 'passkey.cloned_authenticator')).toHaveLength(1);
  });

  it('a blocked passkey says why only after a valid signature: a response that does not verify gets the plain refusal', async () => {
    const { authenticator } = await blockedOwner();
    const phished = await signIn(authenticator, { origin: 'https://login.example-phish.test' });
    expect(phished.status).toBe(401);
    expect(phished.body).toMatchObject({ error: 'access_denied' });
    expect(phished.body.error_description).not.toMatch(/copy|block/i);
    const unverified = await signIn(authenticator, { userVerified: false });
    expect(unverified.status).toBe(401);
    expect(unverified.body).toMatchObject({ error: 'access_denied' });
  });

  it('users:show shows the block; users:passkey-remove takes the passkey away (audited), and a new passkey then signs in', async () => {
    const { user, authenticator, clone, passkeyId } = await blockedOwner();
    const shown = await cliJson(['users:show', '--username', user.username]);
    expect(shown.factors).toEqual([{ kind: 'passkey', id: passkeyId, name: 'Laptop', created_at: expect.any(String), last_used_at: expect.any(String), synced: false, blocked: expect.stringMatching(BLOCKED) }]);

    // Another person's passkey, or none: refused, nothing removed.
    const other = await app.createUser();
    const refused = await runCli(['users:passkey-remove', '--username', other.username, '--passkey', passkeyId]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('no passkey');
    expect(await app.nest.get(PasskeysService).countFor(user.id)).toBe(1);
    // An id that is no passkey's shape: the same clear refusal, never a database error.
    const malformed = await runCli(['users:passkey-remove', '--username', user.username, '--passkey', 'not-a-passkey-id']);
    expect(malformed.code).not.toBe(0);
    expect(malformed.stderr).toContain('no passkey');
    expect(await app.nest.get(PasskeysService).countFor(user.id)).toBe(1);

    expect(await cliJson(['users:passkey-remove', '--username', user.username, '--passkey', passkeyId])).toEqual({ username: user.username, passkey: passkeyId, removed: true });
    expect(await app.nest.get(PasskeysService).countFor(user.id)).toBe(0);
    expect((await passkeyEvents(user.id)).at(-1)).toMatchObject({ action: 'passkey.removed', actor: 'cli', details: { passkey: passkeyId } });
    expect((await cliJson(['users:show', '--username', user.username])).factors).toEqual([]);

    // Neither copy of the old key is known any more; a new passkey, added after a password sign-in, works.
    expect((await signIn(authenticator)).status).toBe(401);
    expect((await signIn(clone)).status).toBe(401);
    const fresh = new SoftAuthenticator(rpId, app.origin);
    expect((await app.addPasskey(await app.signedIn(user), fresh, 'New laptop')).status).toBe(200);
    const again = await signIn(fresh);
    expect(again.status).toBe(200);
    expect(await signedIn(again.browser)).toBe(true);
  });

  it('the account page shows the block; after a password sign-in the person removes it (nobody else can) and enrols a new passkey', async () => {
    const { user, authenticator, passkeyId } = await blockedOwner();
    // The blocked passkey is no longer a factor: a password sign-in is the strongest this person has left.
    const browser = await app.signedIn(user);
    const page = await browser.get('/account/passkeys');
    expect(page.body).toMatch(/Blocked: a copy was detected on \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(page.body).toContain('action="/account/passkeys/remove"');

    const stranger = await app.createUser();
    const strangerBrowser = await app.signedIn(stranger);
    const strangerCsrf = await app.accountCsrf(strangerBrowser);
    expect((await strangerBrowser.post('/account/passkeys/remove', { csrf_token: strangerCsrf, passkey_id: passkeyId })).status).toBe(404);
    expect(await app.nest.get(PasskeysService).countFor(user.id)).toBe(1);

    expect((await browser.submit(page, '/account/passkeys/remove', { passkey_id: passkeyId })).status).toBe(303);
    expect(await app.nest.get(PasskeysService).countFor(user.id)).toBe(0);
    expect((await signIn(authenticator)).status).toBe(401);
    const fresh = new SoftAuthenticator(rpId, app.origin);
    expect((await app.addPasskey(browser, fresh, 'New laptop')).status).toBe(200);
    expect((await signIn(fresh)).status).toBe(200);
  });
});
