import type { Redis } from 'ioredis';

/** Injection token of the shared Redis connection: an ioredis client, or null when REDIS_URL is unset. */
export const REDIS_CLIENT = Symbol('REDIS_CLIENT');

export type RedisClient = Redis | null;
