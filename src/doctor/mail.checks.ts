import { mailConfig, type MailConfig } from '../config/mail.config.js';
import { ConfigValidationError } from '../config/validate-env.js';
import { smtpOptions } from '../mail/smtp-options.js';
import { fail, ok, skip, warn, type CheckResult } from './check.js';

/** The relay gets this long to greet us and accept our credentials. */
const TIMEOUT_MS = 5000;

/**
 * `mail` (issue 46): whether email is set up (without SMTP_URL the forgotten-password link,
 * invitations by email, address changes and self-registration are off), and whether the relay
 * answers, with the TLS and credentials the server would use. The URL is never printed.
 */
export async function mailCheck(): Promise<CheckResult> {
  let config: MailConfig;
  try {
    config = mailConfig();
  } catch (error) {
    const problems = error instanceof ConfigValidationError ? error.problems.join('; ') : (error as Error).message;
    return fail('mail', `the email settings are wrong: ${problems}.`, 'Correct them: the server does not start with them.');
  }
  if (!config.smtpUrl) return skip('mail', 'email is off (SMTP_URL unset): no "Forgot your password?", no email invitations, address changes or self-registration; users:invite --print-link gives links to hand over.');
  const { createTransport } = await import('nodemailer');
  const transport = createTransport(smtpOptions({ ...config, smtpUrl: config.smtpUrl }, TIMEOUT_MS));
  try {
    await transport.verify();
  } catch (error) {
    return fail('mail', `the SMTP relay did not accept a connection: ${(error as Error).message}.`, 'Check SMTP_URL (host, port, credentials) and SMTP_TLS, and that this host may reach the relay.');
  } finally {
    transport.close();
  }
  const registration = config.selfRegistration ? ` Self-registration is on${config.registrationDomains.length > 0 ? ` for ${config.registrationDomains.join(', ')}` : ' for any address'}.` : '';
  if (config.tls === 'none') return warn('mail', `the SMTP relay answers, without TLS: links travel to it in clear.${registration}`, 'Use SMTP_TLS=required unless the relay is on this host.');
  if (config.selfRegistration && config.registrationDomains.length === 0) return warn('mail', `the SMTP relay answers (TLS ${config.tls}).${registration}`, 'Set SELF_REGISTRATION_DOMAINS unless anyone on the Internet may create an account.');
  return ok('mail', `the SMTP relay answers (TLS ${config.tls}).${registration}`);
}
