/**
 * Email over TLS, as docs/guides/email.md has it (SMTP_TLS=required, the default): the server,
 * started as `npm start` starts it, sends through a real SMTP server offering STARTTLS with a
 * certificate the process trusts (NODE_EXTRA_CA_CERTS, as a company's CA would be), and the message
 * arrives encrypted; a relay that offers no STARTTLS gets nothing, in clear or otherwise.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Browser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { startAsNpmStart, stopServer } from '../helpers/npm-start.js';
import { makeSelfSignedCertificate, type SelfSigned } from '../helpers/self-signed.js';
import { SmtpSink } from '../helpers/smtp-sink.js';
import { dropTestDatabase } from '../helpers/test-database.js';

describe('email over TLS (SMTP_TLS=required, the default)', () => {
  let certificate: SelfSigned;
  let relay: SmtpSink;
  let plain: SmtpSink;
  let server: ChildProcess | undefined;
  let issuer: URL;

  beforeAll(async () => {
    certificate = makeSelfSignedCertificate();
    relay = await SmtpSink.start({ tls: { key: readFileSync(certificate.keyFile, 'utf8'), cert: certificate.cert } });
    plain = await SmtpSink.start();
    ({ server, issuer } = await startAsNpmStart({ SMTP_URL: relay.url, NODE_EXTRA_CA_CERTS: certificate.certFile, SMTP_TLS: undefined }));
    const created = await runCli(['users:create', '--username', 'tess', '--password', 'correct horse battery staple', '--email', 'tess@example.org']);
    expect(created.code).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await stopServer(server);
    await relay?.stop();
    await plain?.stop();
    await dropTestDatabase();
  });

  it('a forgotten-password message reaches the relay over STARTTLS', async () => {
    const browser = new Browser(issuer.origin);
    const answered = await browser.submit(await browser.get('/password/forgot'), '/password/forgot', { email: 'tess@example.org' });
    expect(answered.status).toBe(200);
    const mail = await relay.waitFor('tess@example.org');
    expect(mail.subject).toContain('password');
    expect(mail.secure).toBe(true);
  });

  it('a relay that offers no STARTTLS is refused: the invitation is not sent, and the command says so', async () => {
    const result = await runCli(['users:invite', '--username', 'uma', '--email', 'uma@example.org'], { env: { SMTP_URL: plain.url, NODE_EXTRA_CA_CERTS: certificate.certFile } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/STARTTLS|TLS/i);
    expect(plain.messages).toEqual([]);
  });
});
