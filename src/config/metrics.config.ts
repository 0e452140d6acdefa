import { registerAs, type ConfigType } from '@nestjs/config';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { listenAddress } from './app.config.js';
import { validateEnv } from './validate-env.js';

class MetricsEnv {
  /** Serve Prometheus metrics on their own listener (default true). */
  @IsOptional() @IsIn(['true', 'false'])
  METRICS_ENABLED?: string;

  /** Port of the metrics listener, apart from the public port so that it can be kept closed to the public; 0 picks a free port. */
  @IsOptional() @IsInt() @Min(0) @Max(65535)
  METRICS_PORT?: number;

  /** Interface of the metrics listener (default: HOST, the application's own). */
  @IsOptional() @IsString()
  METRICS_HOST?: string;
}

export const metricsConfig = registerAs('metrics', () => {
  const env = validateEnv(MetricsEnv, process.env);
  const app = listenAddress();
  const port = env.METRICS_PORT ?? 9464;
  const host = env.METRICS_HOST ?? app.host;
  const enabled = env.METRICS_ENABLED !== 'false';
  if (enabled && port !== 0 && port === app.port) {
    throw new Error('Invalid configuration:\n  - METRICS_PORT: must differ from PORT, so that /metrics stays off the public listener');
  }
  return { enabled, port, host };
});

export type MetricsConfig = ConfigType<typeof metricsConfig>;
