/**
 * What email-links/ needs of the mail transport (mail/ provides it, through the module that
 * registers these pages): send one templated message. email-links/ knows nothing of SMTP.
 */
export const MAIL_SENDER = Symbol('MAIL_SENDER');

/** The messages there are; each is a pair of files <name>.txt and <name>.html in src/mail/templates. */
export const MAIL_TEMPLATES = ['invite', 'verify-email', 'reset-password', 'password-changed', 'change-email-confirm', 'change-email-notice', 'register-verify', 'register-exists'] as const;
export type MailTemplateName = (typeof MAIL_TEMPLATES)[number];

export interface OutgoingMail {
  template: MailTemplateName;
  to: string;
  /** The {{placeholders}}' values; `service` (the issuer's name) is added by the sender. */
  values: Record<string, string>;
}

export interface MailSender {
  /** Whether SMTP_URL is set: without it every email feature is off. */
  readonly enabled: boolean;
  /** What messages and pages call this service (MAIL_SERVICE_NAME, else the issuer's host). */
  readonly serviceName: string;
  /** Sends now; rejects when the relay refuses or cannot be reached. */
  send(mail: OutgoingMail): Promise<void>;
  /** Sends after the caller has answered, never rejecting: a failure is logged (never the link). */
  sendLater(mail: OutgoingMail): void;
}
