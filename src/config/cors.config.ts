import { registerAs, type ConfigType } from '@nestjs/config';
import { IsOptional, IsString } from 'class-validator';
import { exactOrigin } from '../common/origin.js';
import { ConfigValidationError, validateEnv } from './validate-env.js';

class CorsEnv {
  /**
   * Origins of browser apps that register no redirect URI at their own origin (a page that signs
   * in through another app's redirect), comma-separated: https://app.example.com,https://admin.example.com.
   */
  @IsOptional() @IsString()
  CORS_ALLOWED_ORIGINS?: string;
}

/**
 * Cross-origin requests from browser apps (src/cors/). The origins of every client's redirect URIs
 * are allowed without being listed here; these are allowed besides, for every client.
 */
export const corsConfig = registerAs('cors', () => {
  const env = validateEnv(CorsEnv, process.env);
  const listed = (env.CORS_ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const problems = listed
    .filter((entry) => exactOrigin(entry) === undefined)
    .map((entry) => `CORS_ALLOWED_ORIGINS: ${JSON.stringify(entry)} is not an origin: write scheme://host[:port] exactly as a browser sends it (http or https, lower case, no path, no trailing slash, no default port; "*" and "null" are refused)`);
  if (problems.length > 0) throw new ConfigValidationError(problems);
  return { allowedOrigins: [...new Set(listed)] };
});

export type CorsConfig = ConfigType<typeof corsConfig>;
