import { registerAs, type ConfigType } from '@nestjs/config';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { isIP } from 'node:net';
import { appConfig } from './app.config.js';
import { factorsConfig } from './factors.config.js';
import { ConfigValidationError, validateEnv } from './validate-env.js';

class PasskeyEnv {
  /**
   * The WebAuthn relying party ID (WebAuthn Level 3 §5.1.4.1): the issuer's host by default; may
   * name a parent domain of it (example.com for an issuer at login.example.com), so that passkeys
   * keep working if the issuer moves within that domain.
   */
  @IsOptional() @IsString()
  PASSKEY_RP_ID?: string;

  /** Ceremonies (challenges stored) one address may begin per minute; 0 switches the limit off. */
  @IsOptional() @IsInt() @Min(0) @Max(100_000)
  PASSKEY_CEREMONIES_PER_MINUTE?: number;
}

/** A host name as WebAuthn accepts it for an RP ID: lower-case labels, no port, no trailing dot. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** The issuer's host without the brackets URL keeps around an IPv6 address. */
function hostOf(issuer: string): string {
  return new URL(issuer).hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Passkeys (WebAuthn, issue 33). The origin that signed responses must name is the issuer's, exactly;
 * `rpId` is null when the issuer's host is an IP address, where browsers refuse WebAuthn.
 */
export const passkeyConfig = registerAs('passkey', () => {
  const env = validateEnv(PasskeyEnv, process.env);
  const { issuer } = appConfig();
  const host = hostOf(issuer);
  const ipHost = isIP(host) !== 0;
  const wanted = env.PASSKEY_RP_ID?.trim().toLowerCase();
  const problems: string[] = [];
  if (wanted !== undefined && wanted !== '') {
    if (ipHost) problems.push(`PASSKEY_RP_ID: the issuer's host ${host} is an IP address, where browsers refuse passkeys; give ISSUER a domain name first`);
    else if (!HOST_NAME.test(wanted)) problems.push(`PASSKEY_RP_ID: "${wanted}" is not a host name`);
    // WebAuthn §5.1.4.1 and HTML's "is a registrable domain suffix of or is equal to".
    else if (host !== wanted && !host.endsWith(`.${wanted}`)) problems.push(`PASSKEY_RP_ID: "${wanted}" is neither the issuer's host ${host} nor a parent domain of it`);
    else if (host !== wanted && !wanted.includes('.')) problems.push(`PASSKEY_RP_ID: "${wanted}" is a top-level domain; browsers accept only a registrable domain`);
  }
  if (problems.length > 0) throw new ConfigValidationError(problems);
  return {
    /** The relying party ID, or null when passkeys cannot work at this issuer (an IP address). */
    rpId: ipHost ? null : wanted || host,
    /** The one origin a ceremony's clientDataJSON may name: the issuer's. */
    origin: new URL(issuer).origin,
    rpName: 'Latchkey',
    /** A registration or sign-in ceremony must finish within this long (WebAuthn's timeout, and the challenge's life). */
    ceremonySeconds: 300,
    /** Adding or removing a passkey needs a sign-in at most this old: FACTOR_CHANGE_RECENT_SECONDS, one rule for every factor. */
    recentSignInSeconds: factorsConfig().recentSignInSeconds,
    /** Each ceremony stores a challenge: an address may begin this many per minute (the sign-in page begins one for autofill). */
    ceremoniesPerMinute: env.PASSKEY_CEREMONIES_PER_MINUTE ?? 60,
  };
});

export type PasskeyConfig = ConfigType<typeof passkeyConfig>;
