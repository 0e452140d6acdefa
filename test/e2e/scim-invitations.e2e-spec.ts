/**
 * Issue 46: a person a directory provisions without a password (Entra ID sends none) is invited by
 * email when SCIM_INVITE_WITHOUT_PASSWORD=true: a real SMTP server receives the invitation, whose
 * link sets the first password once. A person provisioned with a password (Okta can send one) is not.
 */
import { randomUUID } from 'node:crypto';
import { UsersService } from '../../src/users/users.service.js';
import { Browser } from '../helpers/browser.js';
import { linkIn, SmtpSink } from '../helpers/smtp-sink.js';
import { TestApp } from '../helpers/test-app.js';
import { entra } from '../scim/entra-id.requests.js';
import { okta } from '../scim/okta.requests.js';
import { provisioningClient, ScimConnector } from '../scim/scim-client.js';

const ENV = { SMTP_TLS: 'none', MAIL_SERVICE_NAME: 'Latchkey Test', SCIM_INVITE_WITHOUT_PASSWORD: 'true' };
const ISSUER = 'http://localhost:3000';

describe('SCIM invitations by email', () => {
  let smtp: SmtpSink;
  let app: TestApp;
  let scim: ScimConnector;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    app = await TestApp.start({ ...ENV, SMTP_URL: smtp.url });
    scim = new ScimConnector(app, (await provisioningClient(app)).token);
  });
  afterAll(async () => {
    await app?.stop();
    await smtp?.stop();
    for (const name of [...Object.keys(ENV), 'SMTP_URL']) delete process.env[name];
  });

  it('invites a person provisioned without a password; the link sets the first password once', async () => {
    const created = await scim.post('/Users', entra.createUser('ines@example.org', randomUUID(), 'ines@example.org'));
    expect(created.status).toBe(201);
    const mail = await smtp.waitFor('ines@example.org');
    expect(mail.subject).toBe('You are invited to Latchkey Test');
    const link = linkIn(mail, ISSUER, '/invitation?token=');
    const browser = new Browser(app.baseUrl);
    const form = await browser.get(link);
    expect((await browser.submit(form, '/invitation', { password: 'a brand new passphrase', password_confirm: 'a brand new passphrase' })).status).toBe(200);
    expect(await app.app.get(UsersService).authenticate('ines@example.org', 'a brand new passphrase')).not.toBeNull();
    expect((await browser.get(link)).status).toBe(400);
  });

  it('sends nothing to a person provisioned with a password', async () => {
    const created = await scim.post('/Users', okta.createUserWithPassword('jon@example.org', randomUUID()));
    expect(created.status).toBe(201);
    // The invitation of the first test arrived within milliseconds; give this one as long before saying none came.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(smtp.to('jon@example.org')).toEqual([]);
  });
});
