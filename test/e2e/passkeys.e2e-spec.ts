/**
 * Passkeys (issue 33 part 1) end to end over a real port: a person signed in with a password adds
 * passkeys on the account page, sees them listed, signs in with one alone and continues where the
 * sign-in page was taken, and removes one. Responses come from a software authenticator
 * (test/helpers/soft-authenticator.ts) that builds real WebAuthn data.
 */
import { jest } from '@jest/globals';
import { startAtIssuer } from '../helpers/app-at-issuer.js';
import { Browser } from '../helpers/browser.js';
import { auditActions, PasskeyTestApp, rowCount } from '../helpers/passkeys.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { dropTestDatabase } from '../helpers/test-database.js';
import { PasskeysService } from '../../src/passkeys/passkeys.service.js';
import { LoginSession } from '../../src/auth/interaction/login-session.js';
import { UsersService } from '../../src/users/users.service.js';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

jest.setTimeout(60_000);

describe('passkeys', () => {
  let app: PasskeyTestApp;
  let rpId: string;

  beforeAll(async () => {
    app = await PasskeyTestApp.start();
    rpId = new URL(app.origin).hostname;
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('a person adds two named passkeys, sees them listed, signs in with one alone, and removes the other', async () => {
    const user = await app.createUser();
    const browser = await app.signedIn(user);
    const laptop = new SoftAuthenticator(rpId, app.origin);
    const phone = new SoftAuthenticator(rpId, app.origin, { backupEligible: true });

    const added = await app.addPasskey(browser, laptop, 'Laptop');
    expect(added.status).toBe(200);
    expect(JSON.parse(added.body)).toEqual({ location: '/account/passkeys?done=added' });
    expect((await app.addPasskey(browser, phone, 'Phone')).status).toBe(200);

    const page = await browser.get('/account/passkeys?done=added');
    expect(page.status).toBe(200);
    expect(page.body).toContain('Your passkey was added.');
    expect(page.body).toContain('<h2 class="subtitle">Laptop</h2>');
    expect(page.body).toContain('<h2 class="subtitle">Phone</h2>');
    expect(page.body).toMatch(/Added \d{4}-\d\d-\d\d \d\d:\d\d UTC · never used/);
    // Only this page and the sign-in page may run scripts, and only ours.
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'; connect-src 'self';/);
    expect(page.body).toContain('<script src="/assets/simplewebauthn-browser.js" defer></script>');
    expect(page.body).not.toMatch(/<script(?![^>]*src="\/assets\/)/);

    const service = app.nest.get(PasskeysService);
    expect(await service.countFor(user.id)).toBe(2);
    const summaries = await service.listFor(user.id);
    expect(summaries.map((s) => [s.name, s.synced])).toEqual([
      ['Laptop', false],
      ['Phone', true],
    ]);
    expect(Object.keys(summaries[0]).sort()).toEqual(['blockedSince', 'createdAt', 'id', 'lastUsedAt', 'name', 'synced']);

    // Signed out, then signed in with the laptop's passkey and nothing else.
    const stranger = app.browser();
    const { answer } = await app.passkeySignIn(stranger, laptop, {}, '/account/passkeys');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ location: '/account/passkeys' });
    const home = await stranger.get('/account');
    expect(home.body).toContain(`as <strong>${user.username}</strong>`);
    expect((await stranger.get('/account/passkeys')).body).toMatch(/Laptop<\/h2>\s*<p class="note">Added [^<]*· last used \d{4}/);

    // The phone's passkey is removed, with the form's CSRF token.
    const phoneId = summaries[1].id;
    const account = await stranger.get('/account/passkeys');
    const removed = await stranger.submit(account, '/account/passkeys/remove', { passkey_id: phoneId });
    expect(removed.status).toBe(303);
    expect(removed.location).toBe('/account/passkeys?done=removed');
    expect((await service.listFor(user.id)).map((s) => s.name)).toEqual(['Laptop']);
    expect(await auditActions(app.dataSource)).toEqual(expect.arrayContaining(['passkey.added', 'passkey.signed_in', 'passkey.removed']));
  });

  it('a passkey sign-in records RFC 8176 amr: hwk for a device-bound key, swk for a synced one, with user and mfa', async () => {
    const user = await app.createUser();
    const browser = await app.signedIn(user);
    const bound = new SoftAuthenticator(rpId, app.origin);
    const synced = new SoftAuthenticator(rpId, app.origin, { backupEligible: true });
    await app.addPasskey(browser, bound, 'Security key');
    await app.addPasskey(browser, synced, 'Synced');
    const methods = jest.spyOn(app.nest.get(LoginSession), 'logIn');
    try {
      expect((await app.passkeySignIn(app.browser(), bound)).answer.status).toBe(200);
      expect((await app.passkeySignIn(app.browser(), synced)).answer.status).toBe(200);
      expect(methods.mock.calls.map((call) => call[2])).toEqual([
        ['hwk', 'user', 'mfa'],
        ['swk', 'user', 'mfa'],
      ]);
    } finally {
      methods.mockRestore();
    }
  });

  it('the sign-in page offers a passkey button and browser autofill, with our scripts only', async () => {
    const login = await app.browser().get('/login');
    expect(login.body).toContain('autocomplete="username webauthn"');
    expect(login.body).toContain('id="passkey-sign-in"');
    expect(login.headers.get('content-security-policy')).toContain("script-src 'self'");
    const library = await fetch(`${app.baseUrl}/assets/simplewebauthn-browser.js`);
    expect(library.status).toBe(200);
    expect(library.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await library.text()).toContain('SimpleWebAuthnBrowser');
    expect((await fetch(`${app.baseUrl}/assets/passkeys.js`)).status).toBe(200);
    // Every other page keeps no script at all.
    const home = await app.browser().get('/');
    expect(home.headers.get('content-security-policy')).not.toContain('script-src');
  });
});

describe('passkeys at an issuer on an IP address', () => {
  afterAll(async () => {
    await dropTestDatabase();
  });

  it('the sign-in and account pages say passkeys need a domain name, and offer no button or script', async () => {
    const { nest, issuer } = await startAtIssuer();
    try {
      const browser = new Browser(issuer.origin);
      const login = await browser.get('/login');
      expect(login.body).toContain('id="passkeys-unavailable"');
      expect(login.body).toContain('ISSUER');
      expect(login.body).not.toContain('id="passkey-sign-in"');
      expect(login.body).not.toContain('<script');
      expect(login.headers.get('content-security-policy')).not.toContain('script-src');
      const username = `ip_${Math.random().toString(36).slice(2, 8)}`;
      await nest.get(UsersService).create(username, 'correct horse battery staple');
      const done = await browser.submit(login, '/login', { username, password: 'correct horse battery staple' });
      expect(done.status).toBe(303);
      const account = await browser.get('/account/passkeys');
      expect(account.body).toContain('id="passkeys-unavailable"');
      expect(account.body).not.toContain('<script');
      const csrf = /name="csrf_token" value="([^"]+)"/.exec((await browser.get('/account')).body)![1];
      const options = await browser.postJson('/account/passkeys/registration/options', { csrf_token: csrf });
      expect(options.status).toBe(409);
      expect(await rowCount(nest.get<DataSource>(getDataSourceToken()), 'passkey_challenges')).toBe(0);
    } finally {
      await nest.close();
    }
  });
});
