import { registerAs, type ConfigType } from '@nestjs/config';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env.js';

class ClientAuthEnv {
  /** The longest a client assertion may still be valid when it arrives (RFC 7523 §3: exp; FAPI 2.0 asks for short ones). */
  @IsOptional() @IsInt() @Min(10) @Max(3600)
  CLIENT_ASSERTION_MAX_LIFETIME_SECONDS?: number;

  /** How long a client's key set fetched from its jwks_uri is used before it is fetched again. */
  @IsOptional() @IsInt() @Min(0) @Max(86400)
  CLIENT_JWKS_CACHE_SECONDS?: number;
}

/** private_key_jwt client authentication (RFC 7523 §2.2, OpenID Connect Core §9). */
export const clientAuthConfig = registerAs('clientAuth', () => {
  const env = validateEnv(ClientAuthEnv, process.env);
  return {
    assertionMaxLifetimeSeconds: env.CLIENT_ASSERTION_MAX_LIFETIME_SECONDS ?? 300,
    jwksCacheSeconds: env.CLIENT_JWKS_CACHE_SECONDS ?? 300,
  };
});

export type ClientAuthConfig = ConfigType<typeof clientAuthConfig>;
