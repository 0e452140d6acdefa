import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { RedisConfig } from '../config/redis.config.js';
import type { RedisClient } from './redis.constants.js';

/** A command that gets no answer within this long fails, so a hung Redis cannot hang requests. */
const COMMAND_TIMEOUT_MS = 500;
const CONNECT_TIMEOUT_MS = 2000;
/** While Redis is unreachable, ioredis retries every ~2 s; say so at most this often. */
const ERROR_LOG_INTERVAL_MS = 60_000;

/**
 * Connects at start-up (lazyConnect: false) and keeps reconnecting in the background. Without an
 * offline queue a command issued while Redis is down fails at once instead of waiting for the
 * reconnection, and its caller falls back (see rate-limit/). The URL is never logged: it may carry
 * a password.
 */
export function createRedisClient(config: RedisConfig): RedisClient {
  if (!config.url) return null;
  const logger = new Logger('Redis');
  const client = new Redis(config.url, {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
  });
  let lastLogged = 0;
  // Without an 'error' listener ioredis prints every failed reconnection to stderr itself.
  client.on('error', (error: Error) => {
    if (Date.now() - lastLogged < ERROR_LOG_INTERVAL_MS) return;
    lastLogged = Date.now();
    logger.warn(`Redis is unreachable (${error.message}); rate limits fall back to this instance's memory until it is back`);
  });
  client.on('ready', () => {
    if (lastLogged > 0) logger.log('Redis is reachable again');
    lastLogged = 0;
  });
  return client;
}
