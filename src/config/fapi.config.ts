import { registerAs, type ConfigType } from '@nestjs/config';
import { IsBooleanString, IsOptional } from 'class-validator';
import { validateEnv } from './validate-env.js';

class FapiEnv {
  /** Hold every client to the FAPI 2.0 Security Profile, as if each were registered with security_profile "fapi2". */
  @IsOptional() @IsBooleanString()
  FAPI2_REQUIRED?: string;
}

/** The FAPI 2.0 Security Profile (OpenID Foundation, final), server-wide. */
export const fapiConfig = registerAs('fapi', () => {
  const env = validateEnv(FapiEnv, process.env);
  return { required: env.FAPI2_REQUIRED === 'true' };
});

export type FapiConfig = ConfigType<typeof fapiConfig>;
