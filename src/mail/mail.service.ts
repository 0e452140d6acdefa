import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { createTransport, type Transporter } from 'nodemailer';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { mailConfig, type MailConfig } from '../config/mail.config.js';
import type { MailSender, OutgoingMail } from '../email-links/mail-sender.js';
import { MailTemplates } from './mail-templates.js';
import { smtpOptions } from './smtp-options.js';

/** Each step of an SMTP conversation gets this long: a relay that hangs fails the send, not the process. */
const SMTP_TIMEOUT_MS = 10_000;

/**
 * Sends the messages through the SMTP relay of SMTP_URL (nodemailer). The TLS setting decides how
 * the links travel to the relay: smtps:// or STARTTLS that must succeed (required, the default),
 * STARTTLS when offered (opportunistic), or none (a relay on the same host). Nothing logged here
 * holds a link or a token: a failure is logged with the template's name and the relay's answer.
 */
@Injectable()
export class MailService implements MailSender, OnApplicationShutdown {
  private readonly logger = new Logger('Mail');
  private readonly transport: Transporter | null;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    @Inject(mailConfig.KEY) private readonly config: MailConfig,
    @Inject(appConfig.KEY) private readonly app: AppConfig,
    private readonly templates: MailTemplates,
  ) {
    this.transport = config.smtpUrl ? createTransport(smtpOptions({ ...config, smtpUrl: config.smtpUrl }, SMTP_TIMEOUT_MS)) : null;
  }

  get enabled(): boolean {
    return this.transport !== null;
  }

  /** The name messages call this service by: MAIL_SERVICE_NAME, else the issuer's host. */
  get serviceName(): string {
    return this.config.serviceName ?? new URL(this.app.issuer).host;
  }

  async send(mail: OutgoingMail): Promise<void> {
    if (!this.transport) throw new Error('email is not set up (SMTP_URL)');
    const message = this.templates.render(mail.template, { ...mail.values, service: this.serviceName });
    await this.transport.sendMail({ from: this.from(), to: mail.to, subject: message.subject, text: message.text, html: message.html });
  }

  sendLater(mail: OutgoingMail): void {
    // After the answer has gone: the time the relay takes must not tell who has an account.
    const sending = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.send(mail))
      .catch((error: unknown) => this.logger.warn(`the ${mail.template} message could not be sent: ${(error as Error).message}`))
      .finally(() => this.pending.delete(sending));
    this.pending.add(sending);
  }

  /** Whether the relay answers and accepts our credentials (doctor). */
  async verify(): Promise<void> {
    if (!this.transport) throw new Error('email is not set up (SMTP_URL)');
    await this.transport.verify();
  }

  async onApplicationShutdown(): Promise<void> {
    // Messages already promised (a reset link) go out before the process ends.
    await Promise.allSettled([...this.pending]);
    this.transport?.close();
  }

  private from(): string {
    return this.config.from ?? `"${this.serviceName.replace(/["\\\r\n]/g, '')}" <no-reply@${new URL(this.app.issuer).hostname}>`;
  }
}
