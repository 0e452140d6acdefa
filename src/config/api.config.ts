import { registerAs, type ConfigType } from '@nestjs/config';
import { join, resolve } from 'node:path';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { PROJECT_ROOT } from '../common/project-root.js';
import { validateEnv } from './validate-env.js';

class ApiEnv {
  /** The collections file (JSON); a relative path is resolved from the working directory. */
  @IsOptional() @IsString()
  COLLECTIONS_FILE?: string;

  /** Items per page when a request names no `limit`. */
  @IsOptional() @IsInt() @Min(1) @Max(1000)
  API_DEFAULT_LIMIT?: number;

  /** The largest `limit` a request may ask for. */
  @IsOptional() @IsInt() @Min(1) @Max(1000)
  API_MAX_LIMIT?: number;

  /** How long an Idempotency-Key keeps its first answer for replay (draft-ietf-httpapi-idempotency-key-header-07 §2.3). */
  @IsOptional() @IsInt() @Min(60) @Max(7 * 24 * 3600)
  IDEMPOTENCY_KEY_TTL_SECONDS?: number;

  /**
   * How long a request holds its Idempotency-Key while it runs: past that, a retry takes the key
   * over (the holder's instance died). Safe when too short: a write commits only while its claim holds.
   */
  @IsOptional() @IsInt() @Min(1) @Max(300)
  IDEMPOTENCY_CLAIM_SECONDS?: number;
}

export const apiConfig = registerAs('api', () => {
  const env = validateEnv(ApiEnv, process.env);
  const maxLimit = env.API_MAX_LIMIT ?? 100;
  const defaultLimit = env.API_DEFAULT_LIMIT ?? Math.min(20, maxLimit);
  if (defaultLimit > maxLimit) {
    throw new Error(`Invalid configuration:\n  - API_DEFAULT_LIMIT (${defaultLimit}) must not exceed API_MAX_LIMIT (${maxLimit})`);
  }
  return {
    collectionsFile: env.COLLECTIONS_FILE ? resolve(env.COLLECTIONS_FILE) : join(PROJECT_ROOT, 'config', 'collections.json'),
    defaultLimit,
    maxLimit,
    idempotencyKeyTtlSeconds: env.IDEMPOTENCY_KEY_TTL_SECONDS ?? 24 * 3600,
    idempotencyClaimSeconds: env.IDEMPOTENCY_CLAIM_SECONDS ?? 10,
  };
});

export type ApiConfig = ConfigType<typeof apiConfig>;
