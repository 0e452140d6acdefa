import { registerAs, type ConfigType } from '@nestjs/config';
import { IsBooleanString, IsInt, IsOptional, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env.js';

class DpopEnv {
  /**
   * RFC 9449 §8, §9: every DPoP proof must carry a nonce this server handed out (answered with
   * use_dpop_nonce and a DPoP-Nonce header otherwise). On by default: a proof made in advance on a
   * stolen device is then worthless after one rotation.
   */
  @IsOptional() @IsBooleanString()
  DPOP_NONCE_REQUIRED?: string;

  /** How often the server's DPoP nonce changes; the previous one stays accepted for one more period. */
  @IsOptional() @IsInt() @Min(10) @Max(3600)
  DPOP_NONCE_ROTATION_SECONDS?: number;

  /** How far a proof's iat may be from the server's clock, either way (RFC 9449 §11.1: a short window). */
  @IsOptional() @IsInt() @Min(5) @Max(600)
  DPOP_PROOF_MAX_AGE_SECONDS?: number;
}

/** Demonstrating Proof of Possession (RFC 9449). */
export const dpopConfig = registerAs('dpop', () => {
  const env = validateEnv(DpopEnv, process.env);
  return {
    nonceRequired: env.DPOP_NONCE_REQUIRED !== 'false',
    nonceRotationSeconds: env.DPOP_NONCE_ROTATION_SECONDS ?? 300,
    proofMaxAgeSeconds: env.DPOP_PROOF_MAX_AGE_SECONDS ?? 60,
  };
});

export type DpopConfig = ConfigType<typeof dpopConfig>;
