import { registerAs, type ConfigType } from '@nestjs/config';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { parseEncryptionKeys } from './encryption-keys.js';
import { validateEnv } from './validate-env.js';

class MacTokenEnv {
  /**
   * Key(s) that encrypt MAC tokens' mac_key at rest: base64 of 32 bytes each, comma-separated,
   * newest first (older ones still decrypt during a rotation). When unset, a key is generated on
   * first use and kept in the database, so every instance shares it.
   */
  @IsOptional() @IsString()
  TOKEN_ENCRYPTION_KEY?: string;

  /** How far a MAC request's ts may be from the server's clock, either way (draft-ietf-oauth-v2-http-mac-02 §4.1). */
  @IsOptional() @IsInt() @Min(1) @Max(3600)
  MAC_TIMESTAMP_WINDOW_SECONDS?: number;
}

/** MAC tokens (draft-ietf-oauth-v2-http-mac): the key that seals mac_keys at rest, and the accepted clock skew. */
export const macTokenConfig = registerAs('macToken', () => {
  const env = validateEnv(MacTokenEnv, process.env);
  return {
    encryptionKeys: parseEncryptionKeys('TOKEN_ENCRYPTION_KEY', env.TOKEN_ENCRYPTION_KEY),
    timestampWindowSeconds: env.MAC_TIMESTAMP_WINDOW_SECONDS ?? 300,
  };
});

export type MacTokenConfig = ConfigType<typeof macTokenConfig>;
