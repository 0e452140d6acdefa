import { registerAs, type ConfigType } from '@nestjs/config';
import { IsBooleanString, IsInt, IsOptional, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env.js';

class ParEnv {
  /** How long a pushed request's request_uri may wait for the browser (RFC 9126 §2.2 expires_in; short, §7.2). */
  @IsOptional() @IsInt() @Min(5) @Max(600)
  PAR_REQUEST_TTL_SECONDS?: number;

  /** How long, from the browser's arrival at /authorize, the person has to sign in and consent. */
  @IsOptional() @IsInt() @Min(60) @Max(3600)
  PAR_INTERACTION_SECONDS?: number;

  /** Accept authorization requests only when pushed, for every client (RFC 9126 §5, require_pushed_authorization_requests). */
  @IsOptional() @IsBooleanString()
  PAR_REQUIRED?: string;
}

/** Pushed Authorization Requests (RFC 9126). */
export const parConfig = registerAs('par', () => {
  const env = validateEnv(ParEnv, process.env);
  return {
    requestTtlSeconds: env.PAR_REQUEST_TTL_SECONDS ?? 60,
    interactionSeconds: env.PAR_INTERACTION_SECONDS ?? 600,
    required: env.PAR_REQUIRED === 'true',
  };
});

export type ParConfig = ConfigType<typeof parConfig>;
