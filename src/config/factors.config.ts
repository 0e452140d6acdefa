import { registerAs, type ConfigType } from '@nestjs/config';
import { IsBooleanString, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { parseEncryptionKeys } from './encryption-keys.js';
import { validateEnv } from './validate-env.js';

class FactorsEnv {
  /**
   * Key(s) that encrypt one-time-code secrets at rest, as SIGNING_KEY_ENCRYPTION_KEY does for
   * signing keys: base64 of 32 bytes each, comma-separated, newest first. When unset, a key is
   * generated on first use and kept in the database, so every instance shares it.
   */
  @IsOptional() @IsString()
  FACTOR_ENCRYPTION_KEY?: string;

  /** Every person must use a second factor: one who has none is taken through enrolment after the password. */
  @IsOptional() @IsBooleanString()
  MFA_REQUIRED?: string;

  /** How long, after a right password, the person has to type the code before signing in again. */
  @IsOptional() @IsInt() @Min(60) @Max(1800)
  SECOND_FACTOR_WAIT_SECONDS?: number;

  /** How recent a sign-in must be to add or remove a factor or make new recovery codes. */
  @IsOptional() @IsInt() @Min(60) @Max(3600)
  FACTOR_CHANGE_RECENT_SECONDS?: number;
}

/** Second factors (issue 33): the key that seals one-time-code secrets, and when a second factor is required. */
export const factorsConfig = registerAs('factors', () => {
  const env = validateEnv(FactorsEnv, process.env);
  return {
    encryptionKeys: parseEncryptionKeys('FACTOR_ENCRYPTION_KEY', env.FACTOR_ENCRYPTION_KEY),
    mfaRequired: env.MFA_REQUIRED === 'true',
    pendingSeconds: env.SECOND_FACTOR_WAIT_SECONDS ?? 300,
    recentSignInSeconds: env.FACTOR_CHANGE_RECENT_SECONDS ?? 300,
  };
});

export type FactorsConfig = ConfigType<typeof factorsConfig>;
