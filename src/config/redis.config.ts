import { registerAs, type ConfigType } from '@nestjs/config';
import { IsOptional, Matches } from 'class-validator';
import { validateEnv } from './validate-env.js';

class RedisEnv {
  /**
   * Optional. When set, every instance keeps its rate-limit counters in this Redis, so instances
   * behind a load balancer enforce one limit together; when unset, each instance counts in memory.
   * It may carry a password, so it is never logged (validate-env.ts hides *_URL values too).
   */
  @IsOptional() @Matches(/^rediss?:\/\/[^\s]+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;
}

export const redisConfig = registerAs('redis', () => {
  // An empty REDIS_URL= (a common way to switch a variable off) means "no Redis".
  const env = validateEnv(RedisEnv, { REDIS_URL: process.env.REDIS_URL || undefined });
  return { url: env.REDIS_URL };
});

export type RedisConfig = ConfigType<typeof redisConfig>;
