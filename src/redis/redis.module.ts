import { Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { redisConfig } from '../config/redis.config.js';
import { createRedisClient } from './redis-client.factory.js';
import { REDIS_CLIENT, type RedisClient } from './redis.constants.js';

/** Closes the connection when the application stops, so no reconnection timer outlives it. */
@Injectable()
class RedisConnectionCloser implements OnApplicationShutdown {
  constructor(@Inject(REDIS_CLIENT) private readonly redis: RedisClient) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.redis) return;
    // QUIT lets pending replies arrive; a connection that is not up has nothing to wait for.
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis?.disconnect());
    else this.redis.disconnect();
  }
}

/** The optional shared Redis (REDIS_URL): injected as REDIS_CLIENT, null when not configured. */
@Module({
  providers: [{ provide: REDIS_CLIENT, inject: [redisConfig.KEY], useFactory: createRedisClient }, RedisConnectionCloser],
  exports: [REDIS_CLIENT],
})
export class RedisModule {}
