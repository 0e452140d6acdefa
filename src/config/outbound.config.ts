import { registerAs, type ConfigType } from '@nestjs/config';
import { IsBooleanString, IsOptional, IsString } from 'class-validator';
import { readFileSync } from 'node:fs';
import { ConfigValidationError, validateEnv } from './validate-env.js';

class OutboundEnv {
  /** Let outgoing requests reach loopback and private networks (refused by default: SSRF). */
  @IsOptional() @IsBooleanString()
  OUTBOUND_ALLOW_PRIVATE_NETWORKS?: string;

  /** A PEM file of certificate authorities to trust besides the usual ones (a company's private CA). */
  @IsOptional() @IsString()
  OUTBOUND_EXTRA_CA_FILE?: string;
}

/** Requests Latchkey makes itself: back-channel logout notifications, sector identifier documents. */
export const outboundConfig = registerAs('outbound', () => {
  const env = validateEnv(OutboundEnv, process.env);
  let extraCa: string | undefined;
  if (env.OUTBOUND_EXTRA_CA_FILE) {
    try {
      extraCa = readFileSync(env.OUTBOUND_EXTRA_CA_FILE, 'utf8');
    } catch (error) {
      throw new ConfigValidationError([`OUTBOUND_EXTRA_CA_FILE: cannot read ${env.OUTBOUND_EXTRA_CA_FILE} (${(error as Error).message})`]);
    }
  }
  return { allowPrivateNetworks: env.OUTBOUND_ALLOW_PRIVATE_NETWORKS === 'true', extraCa };
});

export type OutboundConfig = ConfigType<typeof outboundConfig>;
