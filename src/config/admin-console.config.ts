import { registerAs, type ConfigType } from '@nestjs/config';
import { IsBooleanString, IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { ACR, type Acr } from '../common/authentication-context.js';
import { validateEnv } from './validate-env.js';

/** ADMIN_CONSOLE_ACR's values: the last part of each level's name (authentication-context.ts). */
const LEVELS = { pwd: ACR.password, mfa: ACR.multiFactor, phr: ACR.phishingResistant } as const satisfies Record<string, Acr>;

class AdminConsoleEnv {
  /** The admin console at /admin (issue 48); the admin API at /admin/api/v1 stays either way. */
  @IsOptional() @IsBooleanString()
  ADMIN_CONSOLE_ENABLED?: string;

  /** The sign-in an administrator needs: mfa (a second factor or a passkey, the default), phr (a passkey) or pwd (a password: for a trial only). */
  @IsOptional() @IsIn(Object.keys(LEVELS))
  ADMIN_CONSOLE_ACR?: keyof typeof LEVELS;

  /** A console session left alone this long ends. */
  @IsOptional() @IsInt() @Min(60) @Max(24 * 3600)
  ADMIN_CONSOLE_IDLE_SECONDS?: number;

  /** A console session ends this long after its sign-in, however busy. */
  @IsOptional() @IsInt() @Min(300) @Max(7 * 24 * 3600)
  ADMIN_CONSOLE_MAX_AGE_SECONDS?: number;

  /** Deleting a client or a person, or rotating the signing keys, needs a sign-in this recent. */
  @IsOptional() @IsInt() @Min(30) @Max(3600)
  ADMIN_CONSOLE_REAUTH_SECONDS?: number;
}

/** The admin console (issue 48): whether it is served, the sign-in it asks of administrators and how long its sessions last. */
export const adminConsoleConfig = registerAs('adminConsole', () => {
  const env = validateEnv(AdminConsoleEnv, process.env);
  return {
    enabled: env.ADMIN_CONSOLE_ENABLED !== 'false',
    acr: LEVELS[env.ADMIN_CONSOLE_ACR ?? 'mfa'],
    idleSeconds: env.ADMIN_CONSOLE_IDLE_SECONDS ?? 900,
    maxAgeSeconds: env.ADMIN_CONSOLE_MAX_AGE_SECONDS ?? 8 * 3600,
    reauthSeconds: env.ADMIN_CONSOLE_REAUTH_SECONDS ?? 300,
  };
});

export type AdminConsoleConfig = ConfigType<typeof adminConsoleConfig>;
