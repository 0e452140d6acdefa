import { registerAs, type ConfigType } from '@nestjs/config';
import { IsBooleanString, IsInt, IsOptional, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env.js';

class ScimEnv {
  /** Requests per minute one provisioning client may make to /scim/v2 (RFC 7644 §3.12 answers 429 beyond it); 0 turns the limit off. */
  @IsOptional() @IsInt() @Min(0) @Max(1_000_000)
  SCIM_RATE_LIMIT_PER_MINUTE?: number;

  /** The most resources one list response holds (RFC 7644 §3.4.2.4 `count`), advertised as filter.maxResults. */
  @IsOptional() @IsInt() @Min(1) @Max(10_000)
  SCIM_MAX_RESULTS?: number;

  /** Whether a person a directory creates without a password is sent an invitation to set one (when an email sender is configured). */
  @IsOptional() @IsBooleanString()
  SCIM_INVITE_WITHOUT_PASSWORD?: string;

  /**
   * Whether the addresses a directory provisions count as verified (email_verified, OpenID Connect
   * Core §5.1). Off by default: applications may link accounts on a verified address, so only an
   * administrator who trusts the directory's addresses turns it on.
   */
  @IsOptional() @IsBooleanString()
  SCIM_EMAILS_VERIFIED?: string;
}

export const scimConfig = registerAs('scim', () => {
  const env = validateEnv(ScimEnv, process.env);
  return {
    ratePerMinute: env.SCIM_RATE_LIMIT_PER_MINUTE ?? 600,
    maxResults: env.SCIM_MAX_RESULTS ?? 100,
    inviteWithoutPassword: env.SCIM_INVITE_WITHOUT_PASSWORD === 'true',
    emailsVerified: env.SCIM_EMAILS_VERIFIED === 'true',
  };
});

export type ScimConfig = ConfigType<typeof scimConfig>;
