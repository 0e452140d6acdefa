import type { MailConfig } from '../config/mail.config.js';

/**
 * nodemailer's SMTP options for SMTP_URL and SMTP_TLS, shared by the server and `doctor`: TLS from
 * the first byte for smtps://; else STARTTLS that must succeed (required), STARTTLS when offered
 * (opportunistic), or never (none, a relay on this host). TLS 1.2 at least, certificates verified.
 */
export function smtpOptions(config: MailConfig & { smtpUrl: string }, timeoutMs: number) {
  const secure = new URL(config.smtpUrl).protocol === 'smtps:';
  return {
    url: config.smtpUrl,
    secure,
    requireTLS: config.tls === 'required' && !secure,
    ignoreTLS: config.tls === 'none',
    opportunisticTLS: config.tls === 'opportunistic',
    tls: { minVersion: 'TLSv1.2' as const },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  };
}
