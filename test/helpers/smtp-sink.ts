import { simpleParser } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  /** Whether the message came over TLS (STARTTLS), which only a sink started with `tls` offers. */
  secure: boolean;
}

/**
 * A real SMTP server (nodemailer's smtp-server) on a free loopback port that keeps every message
 * it accepts, parsed (mailparser). Without `tls` it offers no STARTTLS, so the app under test
 * connects with SMTP_TLS=none; with a certificate it offers STARTTLS, as a company's relay does.
 */
export class SmtpSink {
  readonly messages: ReceivedMail[] = [];

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(options: { tls?: { key: string; cert: string } } = {}): Promise<SmtpSink> {
    const messages: ReceivedMail[] = [];
    const server = new SMTPServer({
      authOptional: true,
      ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : { disabledCommands: ['STARTTLS'] }),
      logger: false,
      onData(stream, session, callback) {
        simpleParser(stream).then(
          (mail) => {
            const to = session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase());
            messages.push({ to, from: mail.from?.text ?? '', subject: mail.subject ?? '', text: mail.text ?? '', html: typeof mail.html === 'string' ? mail.html : '', secure: session.secure });
            callback();
          },
          (error: Error) => callback(error),
        );
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const sink = new SmtpSink(server, (server.server.address() as AddressInfo).port);
    (sink as { messages: ReceivedMail[] }).messages = messages;
    return sink;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** The messages to `address`, in arrival order. */
  to(address: string): ReceivedMail[] {
    return this.messages.filter((mail) => mail.to.includes(address.toLowerCase()));
  }

  /** Waits for the `count`-th message to `address` (sending happens after the answer). */
  async waitFor(address: string, count = 1, timeoutMs = 5000): Promise<ReceivedMail> {
    const until = Date.now() + timeoutMs;
    while (this.to(address).length < count) {
      if (Date.now() > until) throw new Error(`no message #${count} to ${address} within ${timeoutMs} ms (got ${this.to(address).length})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.to(address)[count - 1];
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The link of a message's text to `path` on `issuer` (links carry the issuer's URL), as a path with
 * its query, for a test browser talking to the app's own port.
 */
export function linkIn(mail: ReceivedMail, issuer: string, path: string): string {
  const found = mail.text.split(/\s+/).find((word) => word.startsWith(`${issuer}${path}`));
  if (!found) throw new Error(`no link to ${issuer}${path} in: ${mail.text}`);
  return found.slice(issuer.length);
}
