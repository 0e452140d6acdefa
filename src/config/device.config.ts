import { registerAs, type ConfigType } from '@nestjs/config';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env.js';

class DeviceEnv {
  /** How long a device_code and its user_code wait for the person (RFC 8628 §3.2 expires_in). */
  @IsOptional() @IsInt() @Min(60) @Max(1800)
  DEVICE_CODE_TTL_SECONDS?: number;

  /** The seconds a device waits between polls of the token endpoint (RFC 8628 §3.2 interval; §3.5 adds 5 at each slow_down). */
  @IsOptional() @IsInt() @Min(1) @Max(60)
  DEVICE_CODE_INTERVAL_SECONDS?: number;
}

/** The device authorization grant (RFC 8628). */
export const deviceConfig = registerAs('device', () => {
  const env = validateEnv(DeviceEnv, process.env);
  return {
    ttlSeconds: env.DEVICE_CODE_TTL_SECONDS ?? 600,
    intervalSeconds: env.DEVICE_CODE_INTERVAL_SECONDS ?? 5,
  };
});

export type DeviceConfig = ConfigType<typeof deviceConfig>;
