/**
 * Issue 46, without SMTP_URL: the email features are off and say so (the sign-in page shows no
 * link, the forms answer a page saying email is not set up, doctor says it is off), and the CLI
 * still prints an invitation link for an administrator to hand over, which works once.
 */
import { UsersService } from '../../src/users/users.service.js';
import { Browser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { TestApp } from '../helpers/test-app.js';

describe('email off (no SMTP_URL)', () => {
  let app: TestApp;

  beforeAll(async () => {
    delete process.env.SMTP_URL;
    delete process.env.SELF_REGISTRATION;
    app = await TestApp.start();
  });

  afterAll(async () => {
    await app.stop();
  });

  it('shows no "Forgot your password?" nor "Create an account", and the forms say email is not set up', async () => {
    const browser = new Browser(app.baseUrl);
    const login = await browser.get('/login');
    expect(login.body).not.toContain('/password/forgot');
    expect(login.body).not.toContain('/signup');
    for (const path of ['/password/forgot', '/account/email']) {
      const page = await browser.get(path);
      expect(page.status).toBe(404);
      expect(page.body).toContain('Email is not set up');
    }
    expect((await browser.get('/signup')).status).toBe(404);
  });

  it('users:invite refuses to send, and --print-link gives a link that sets the first password once', async () => {
    const refused = await runCli(['users:invite', '--username', 'handed', '--email', 'handed@example.org']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Email is not set up (SMTP_URL): use --print-link');
    expect(await app.app.get(UsersService).findByUsername('handed')).toBeNull();

    const printed = await runCli(['users:invite', '--username', 'handed', '--email', 'handed@example.org', '--print-link']);
    expect(printed.stderr).toBe('');
    expect(printed.code).toBe(0);
    const delivery = JSON.parse(printed.stdout) as { username: string; sent: boolean; link: string };
    expect(delivery).toMatchObject({ username: 'handed', sent: false });
    const path = delivery.link.replace('http://localhost:3000', '');
    expect(path).toMatch(/^\/invitation\?token=lk_el_/);

    const browser = new Browser(app.baseUrl);
    const form = await browser.get(path);
    expect(form.status).toBe(200);
    const done = await browser.submit(form, '/invitation', { password: 'handed over passphrase', password_confirm: 'handed over passphrase' });
    expect(done.status).toBe(200);
    expect(await app.app.get(UsersService).authenticate('handed', 'handed over passphrase')).not.toBeNull();
    expect((await browser.get(path)).status).toBe(400);

    const again = await runCli(['users:invite', '--username', 'handed', '--email', 'handed@example.org', '--print-link']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already has a password');
  });

  it('doctor says email is off', async () => {
    const result = await runCli(['doctor', '--json']);
    const report = JSON.parse(result.stdout) as { checks: { id: string; status: string; detail: string }[] };
    expect(report.checks.find((check) => check.id === 'mail')).toMatchObject({ status: 'skip', detail: expect.stringContaining('SMTP_URL unset') });
  });
});
