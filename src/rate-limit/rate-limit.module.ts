import { Logger, Module } from '@nestjs/common';
import { appConfig, type AppConfig } from '../config/app.config.js';
import { rateLimitConfig, REDIS_UNSET_WARNING, type RateLimitConfig } from '../config/rate-limit.config.js';
import { REDIS_CLIENT, type RedisClient } from '../redis/redis.constants.js';
import { RedisModule } from '../redis/redis.module.js';
import { LOGIN_ATTEMPT_STORE, MemoryLoginAttemptStore } from './login-attempts.store.js';
import { LoginThrottle } from './login-throttle.service.js';
import { MemoryThrottlerStorage, RATE_LIMIT_STORAGE } from './memory-throttler.storage.js';
import { RedisLoginAttemptStore } from './redis-login-attempts.store.js';
import { RedisThrottlerStorage } from './redis-throttler.storage.js';
import { CommonModule } from '../common/common.module.js';

/**
 * Rate limits: the counters (in Redis when REDIS_URL is set, so that every instance behind the
 * load balancer enforces one limit together; else in this instance's memory), LoginThrottle for
 * POST /login, and the storage that ClientRateLimitGuard and ApiRateLimitGuard count in. The auth
 * and resources modules import it, since those guards run there.
 *
 * @nestjs/throttler 6.7 is CommonJS and `require`s @nestjs/common, which Nest 12 ships as ES
 * modules only. Node (20.19+) allows that; Jest before Node 24.9 does not, so importing the
 * package's index (ThrottlerModule, ThrottlerGuard, its in-memory storage) fails every e2e test.
 * We keep its storage contract (ThrottlerStorage, a type) and implement it twice.
 */
@Module({
  imports: [CommonModule, RedisModule],
  providers: [
    {
      provide: RATE_LIMIT_STORAGE,
      inject: [REDIS_CLIENT, rateLimitConfig.KEY, appConfig.KEY],
      useFactory: (redis: RedisClient, config: RateLimitConfig, app: AppConfig) => {
        if (redis) return new RedisThrottlerStorage(redis, config.keyPrefix);
        // Legitimate for a single instance; behind a load balancer each instance would allow the full limit.
        if (app.production) new Logger('RateLimit').warn(REDIS_UNSET_WARNING);
        return new MemoryThrottlerStorage();
      },
    },
    {
      provide: LOGIN_ATTEMPT_STORE,
      inject: [REDIS_CLIENT, rateLimitConfig.KEY],
      useFactory: (redis: RedisClient, config: RateLimitConfig) => (redis ? new RedisLoginAttemptStore(redis, config.keyPrefix) : new MemoryLoginAttemptStore()),
    },
    LoginThrottle,
  ],
  exports: [RATE_LIMIT_STORAGE, LoginThrottle],
})
export class RateLimitModule {}
