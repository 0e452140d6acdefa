import { registerAs, type ConfigType } from '@nestjs/config';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { parseEncryptionKeys } from './encryption-keys.js';
import { validateEnv } from './validate-env.js';

class OpenIdEnv {
  /**
   * Key(s) that encrypt the private halves of the ID-token signing keys at rest: base64 of 32 bytes
   * each, comma-separated, newest first. When unset, a key is generated and kept in the database
   * (refused in production, production-guards.ts).
   */
  @IsOptional() @IsString()
  SIGNING_KEY_ENCRYPTION_KEY?: string;

  /**
   * How long a new signing key is published at jwks_uri before it signs anything, so that every
   * relying party's cached JWKS holds it first. The JWKS's Cache-Control max-age is derived from it.
   */
  @IsOptional() @IsInt() @Min(1) @Max(30 * 24 * 3600)
  SIGNING_KEY_PUBLISH_LEAD_SECONDS?: number;

  /** How often each instance reloads the published keys (a rotation made elsewhere reaches it within this time). */
  @IsOptional() @IsInt() @Min(1) @Max(3600)
  SIGNING_KEY_RELOAD_SECONDS?: number;

  /** Lifetime of an ID token (OpenID Connect Core §2, exp). */
  @IsOptional() @IsInt() @Min(60) @Max(24 * 3600)
  ID_TOKEN_TTL_SECONDS?: number;

  /**
   * Whether ID tokens carry the claims their scopes grant (profile, email: Core §5.4), as they do at
   * userinfo, for clients that registered no id_token_claims of their own. Default true: many
   * relying parties read the person's name and email from the ID token alone.
   */
  @IsOptional() @IsIn(['true', 'false'])
  ID_TOKEN_CLAIMS?: string;
}

/** OpenID Connect: the signing keys' protection and schedule, and the ID token's lifetime. */
export const openIdConfig = registerAs('openid', () => {
  const env = validateEnv(OpenIdEnv, process.env);
  const publishLeadSeconds = env.SIGNING_KEY_PUBLISH_LEAD_SECONDS ?? 3600;
  const reloadSeconds = env.SIGNING_KEY_RELOAD_SECONDS ?? 60;
  return {
    signingKeyEncryptionKeys: parseEncryptionKeys('SIGNING_KEY_ENCRYPTION_KEY', env.SIGNING_KEY_ENCRYPTION_KEY),
    publishLeadSeconds,
    reloadSeconds,
    /**
     * A relying party may keep the JWKS this long: a key published now reaches every cache (and every
     * instance's reload) before it signs, as long as max-age + reload stays within the lead.
     */
    jwksMaxAgeSeconds: Math.max(0, Math.min(3600, Math.floor(publishLeadSeconds / 2) - reloadSeconds)),
    idTokenTtlSeconds: env.ID_TOKEN_TTL_SECONDS ?? 3600,
    idTokenClaims: env.ID_TOKEN_CLAIMS !== 'false',
  };
});

export type OpenIdConfig = ConfigType<typeof openIdConfig>;
