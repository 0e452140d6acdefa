import { jest } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { PasskeyStore } from '../../src/factors/passkey.store.js';
import { UsersService } from '../../src/users/users.service.js';
import { Browser } from '../helpers/browser.js';
import { runCli as cli } from '../helpers/cli.js';
import { authorizeUrl, newPkce } from '../helpers/oauth-flow.js';
import { enrolFrom, signInWithPassword } from '../helpers/second-factor.js';
import { TestApp } from '../helpers/test-app.js';

async function cliJson<T = Record<string, unknown>>(args: string[]): Promise<T> {
  const result = await cli(args);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(result.stdout) as T;
}

/** Issue 33 part 5: an administrator sees a person's factors (never a secret), requires one, and resets them. */
describe('admin CLI and second factors', () => {
  let app: TestApp;
  const offsetMs = 0;
  const now = () => Date.now() + offsetMs;

  beforeAll(async () => {
    app = await TestApp.start();
    jest.spyOn(app.clock, 'now').mockImplementation(() => new Date(now()));
  }, 180_000);
  afterAll(async () => app?.stop());

  it('users:show lists the kinds and dates of the factors, never a secret; users:mfa-reset removes them and is audited', async () => {
    const user = await app.createUser();
    const browser = new Browser(app.baseUrl);
    await signInWithPassword(browser, user);
    const { key, recoveryCodes } = await enrolFrom(browser, await browser.get('/account/one-time-codes'), now());

    const shown = await cliJson<Record<string, unknown>>(['users:show', '--username', user.username]);
    expect(shown).toMatchObject({ username: user.username, require_mfa: false });
    expect(shown.factors).toEqual([
      { kind: 'totp', created_at: expect.any(String), last_used_at: expect.any(String) },
      { kind: 'recovery_codes', created_at: expect.any(String), left: 10 },
    ]);
    const printed = JSON.stringify(shown);
    expect(printed).not.toContain(key);
    expect(printed).not.toContain('v1.');
    for (const code of recoveryCodes) expect(printed).not.toContain(code);

    expect(await cliJson(['users:mfa-reset', '--username', user.username])).toEqual({ username: user.username, one_time_codes_removed: true, recovery_codes_removed: 10, passkeys_removed: 0 });
    expect((await cliJson<Record<string, unknown>>(['users:show', '--username', user.username])).factors).toEqual([]);
    const audit = await cliJson<{ actor: string; action: string; subject: string }[]>(['audit:list', '--limit', '5']);
    expect(audit[0]).toMatchObject({ actor: 'cli', action: 'factor.removed' });
    // The password alone signs in again.
    expect((await signInWithPassword(new Browser(app.baseUrl), user)).location).toBe('/');
  });

  it('users:show lists passkeys by name, dates and whether they sync, never key material; users:mfa-reset removes them with everything else', async () => {
    const user = await app.createUser();
    const userId = (await app.app.get(UsersService).require(user.username)).id;
    // The row as a registration stores it (the ceremonies themselves are tested in test/e2e/passkeys and test/security/passkeys-*).
    const credentialId = randomBytes(32).toString('base64url');
    const publicKey = randomBytes(77).toString('base64url');
    await app.app.get(PasskeyStore).insert({ id: randomUUID(), userId, credentialId, publicKey, counter: 0, transports: ['internal'], backupEligible: true, backedUp: true, name: 'Work laptop', createdAt: new Date(), lastUsedAt: null });

    const shown = await cliJson<Record<string, unknown>>(['users:show', '--username', user.username]);
    expect(shown.factors).toEqual([{ kind: 'passkey', id: expect.any(String), name: 'Work laptop', created_at: expect.any(String), last_used_at: null, synced: true, blocked: null }]);
    const printed = JSON.stringify(shown);
    expect(printed).not.toContain(credentialId);
    expect(printed).not.toContain(publicKey);

    expect(await cliJson(['users:mfa-reset', '--username', user.username])).toEqual({ username: user.username, one_time_codes_removed: false, recovery_codes_removed: 0, passkeys_removed: 1 });
    expect((await cliJson<Record<string, unknown>>(['users:show', '--username', user.username])).factors).toEqual([]);
    const audit = await cliJson<{ actor: string; action: string; details: Record<string, unknown> }[]>(['audit:list', '--limit', '1']);
    expect(audit[0]).toMatchObject({ actor: 'cli', action: 'factor.removed' });
  });

  it('users:update --require-mfa makes the person enrol after the password; they may not turn the factor off; --no-require-mfa lifts it', async () => {
    const user = await app.createUser();
    expect(await cliJson(['users:update', '--username', user.username, '--require-mfa'])).toMatchObject({ require_mfa: true });
    const client = await app.createClient({ redirectUris: ['https://rp.example/cb'], scope: 'notes:read' });
    const browser = new Browser(app.baseUrl);
    const pkce = newPkce();
    const request = authorizeUrl(client, { scope: 'openid notes:read', code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    const afterPassword = await browser.submit(await browser.get(request), '/login', { username: user.username, password: user.password });
    expect((await browser.get(afterPassword.location!)).location).toMatch(/^\/account\/one-time-codes\?return_to=/);
    await enrolFrom(browser, await browser.get('/account/one-time-codes'), now());
    const refused = await browser.submit(await browser.get('/account'), '/account/one-time-codes/remove');
    expect(refused.status).toBe(403);
    expect((await cliJson<Record<string, unknown>>(['users:show', '--username', user.username])).factors).toHaveLength(2);
    expect(await cliJson(['users:update', '--username', user.username, '--no-require-mfa'])).toMatchObject({ require_mfa: false });
  });

  it('clients:create --require-mfa registers a floor (minimum_acr) for a second factor, not default_acr_values; --minimum-acr names any level', async () => {
    const created = await cliJson<Record<string, unknown>>(['clients:create', '--name', 'Strict', '--redirect-uri', 'https://strict.example/cb', '--require-mfa']);
    expect({ minimum_acr: created.minimum_acr, default_acr_values: created.default_acr_values }).toEqual({ minimum_acr: 'urn:latchkey:acr:mfa', default_acr_values: undefined });
    const phishingResistant = await cliJson<Record<string, unknown>>(['clients:create', '--name', 'Stricter', '--redirect-uri', 'https://strict.example/cb', '--minimum-acr', 'urn:latchkey:acr:phr']);
    expect(phishingResistant.minimum_acr).toBe('urn:latchkey:acr:phr');
    const unknown = await cli(['clients:create', '--name', 'Odd', '--redirect-uri', 'https://strict.example/cb', '--minimum-acr', 'urn:example:loa:4']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('minimum_acr');
  });
});
