import { registerAs, type ConfigType } from '@nestjs/config';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { ConfigValidationError, validateEnv } from './validate-env.js';

/** How the SMTP connection is protected: TLS from the start (smtps://) or STARTTLS that must succeed; opportunistic STARTTLS; none (a relay on loopback). */
export const SMTP_TLS_MODES = ['required', 'opportunistic', 'none'] as const;
export type SmtpTlsMode = (typeof SMTP_TLS_MODES)[number];

class MailEnv {
  /** smtp://user:password@host:587 or smtps://…:465. Unset: no email is sent and the email features are off. */
  @IsOptional() @IsString()
  SMTP_URL?: string;

  /** required (default): an eavesdropper on the way to the relay must not read the links. */
  @IsOptional() @IsIn(SMTP_TLS_MODES)
  SMTP_TLS?: SmtpTlsMode;

  /** The sender, e.g. `Example Sign-in <no-reply@example.com>`; default no-reply@ the issuer's host. */
  @IsOptional() @IsString()
  MAIL_FROM?: string;

  /** The name messages and pages call this service by; default the issuer's host. */
  @IsOptional() @IsString()
  MAIL_SERVICE_NAME?: string;

  /** A directory of <template>.txt / <template>.html files that replace the built-in ones (src/mail/templates). */
  @IsOptional() @IsString()
  MAIL_TEMPLATES_DIR?: string;

  /** A forgotten-password link works this long: minutes, so that a mailbox read later holds nothing usable. */
  @IsOptional() @IsInt() @Min(60) @Max(3600)
  PASSWORD_RESET_LINK_SECONDS?: number;

  /** An invitation works this long (default 7 days). */
  @IsOptional() @IsInt() @Min(3600) @Max(30 * 86400)
  INVITATION_LINK_SECONDS?: number;

  /** An email verification, change confirmation or registration link works this long (default 1 day). */
  @IsOptional() @IsInt() @Min(600) @Max(7 * 86400)
  EMAIL_VERIFICATION_LINK_SECONDS?: number;

  /** Forgotten-password requests per address, and per person, within PASSWORD_RESET_WINDOW_SECONDS. */
  @IsOptional() @IsInt() @Min(1) @Max(100)
  PASSWORD_RESET_LIMIT?: number;

  @IsOptional() @IsInt() @Min(60) @Max(86400)
  PASSWORD_RESET_WINDOW_SECONDS?: number;

  /** on: anyone with an address at SELF_REGISTRATION_DOMAINS may create an account (needs SMTP_URL). */
  @IsOptional() @IsIn(['on', 'off'])
  SELF_REGISTRATION?: 'on' | 'off';

  /** Comma-separated domains registrants' addresses must be at; empty: any. */
  @IsOptional() @IsString()
  SELF_REGISTRATION_DOMAINS?: string;
}

function smtpUrl(value: string | undefined, problems: string[]): URL | null {
  if (value === undefined || value.trim() === '') return null;
  try {
    const url = new URL(value);
    if (url.protocol === 'smtp:' || url.protocol === 'smtps:') return url;
  } catch {
    // reported below, without the value (it may hold a password)
  }
  problems.push('SMTP_URL: must be smtp://[user:password@]host[:port] or smtps://… (value not shown)');
  return null;
}

/** Email (issue 46): the SMTP relay, the sender, the templates, the links' lifetimes and self-registration. */
export const mailConfig = registerAs('mail', () => {
  const env = validateEnv(MailEnv, process.env);
  const problems: string[] = [];
  const smtp = smtpUrl(env.SMTP_URL, problems);
  const selfRegistration = env.SELF_REGISTRATION === 'on';
  // Registration needs the verification message: without email, it would let anyone in unverified.
  if (selfRegistration && !smtp) problems.push('SELF_REGISTRATION: on needs SMTP_URL (registrants verify their address before first use)');
  if (problems.length > 0) throw new ConfigValidationError(problems);
  const domains = (env.SELF_REGISTRATION_DOMAINS ?? '').split(',').map((domain) => domain.trim().toLowerCase()).filter(Boolean);
  return {
    /** The relay's URL, or null: email off. Never logged (it may carry a password). */
    smtpUrl: smtp?.href ?? null,
    tls: env.SMTP_TLS ?? 'required',
    from: env.MAIL_FROM?.trim() || null,
    serviceName: env.MAIL_SERVICE_NAME?.trim() || null,
    templatesDir: env.MAIL_TEMPLATES_DIR?.trim() || null,
    resetSeconds: env.PASSWORD_RESET_LINK_SECONDS ?? 900,
    invitationSeconds: env.INVITATION_LINK_SECONDS ?? 7 * 86400,
    verificationSeconds: env.EMAIL_VERIFICATION_LINK_SECONDS ?? 86400,
    resetLimit: env.PASSWORD_RESET_LIMIT ?? 3,
    resetWindowSeconds: env.PASSWORD_RESET_WINDOW_SECONDS ?? 900,
    selfRegistration,
    registrationDomains: domains,
  };
});

export type MailConfig = ConfigType<typeof mailConfig>;
