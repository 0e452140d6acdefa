import { registerAs, type ConfigType } from '@nestjs/config';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { validateEnv } from './validate-env.js';

class HousekeepingEnv {
  /** Seconds between purges of expired codes and tokens on this instance; 0 turns the schedule off (the CLI's purge still works). */
  @IsOptional() @IsInt() @Min(0) @Max(7 * 24 * 3600)
  PURGE_INTERVAL_SECONDS?: number;

  /** Rows removed by one DELETE statement: small enough to keep locks and transactions short. */
  @IsOptional() @IsInt() @Min(1) @Max(100_000)
  PURGE_BATCH_SIZE?: number;

  /** Batches per table in one run; the rest waits for the next run. */
  @IsOptional() @IsInt() @Min(1) @Max(100_000)
  PURGE_MAX_BATCHES?: number;

  /** How long past its expiry a row is kept: covers clock differences between instances. */
  @IsOptional() @IsInt() @Min(0) @Max(30 * 24 * 3600)
  PURGE_GRACE_SECONDS?: number;

  /** Seconds between two heartbeats of this instance in the instances table (the dashboard's "instances seen"); 0 records nothing. */
  @IsOptional() @IsInt() @Min(0) @Max(3600)
  INSTANCE_HEARTBEAT_SECONDS?: number;
}

export const housekeepingConfig = registerAs('housekeeping', () => {
  const env = validateEnv(HousekeepingEnv, process.env);
  return {
    intervalSeconds: env.PURGE_INTERVAL_SECONDS ?? 300,
    batchSize: env.PURGE_BATCH_SIZE ?? 1000,
    maxBatches: env.PURGE_MAX_BATCHES ?? 100,
    graceSeconds: env.PURGE_GRACE_SECONDS ?? 3600,
    heartbeatSeconds: env.INSTANCE_HEARTBEAT_SECONDS ?? 30,
    /** Pause between two batches, so that a large backlog does not monopolise the database. */
    batchPauseMs: 50,
  };
});

export type HousekeepingConfig = ConfigType<typeof housekeepingConfig>;
