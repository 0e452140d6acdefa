import type { Redis } from 'ioredis';

export type LuaScript = (keys: string[], args: (string | number)[]) => Promise<unknown>;

/**
 * Registers a Lua script on the client (ioredis defineCommand: EVALSHA, falling back to EVAL the
 * first time a server has not seen it) and returns a typed caller taking any number of keys. A
 * script runs atomically, so every instance sharing the Redis sees one consistent counter.
 */
export function defineLuaScript(redis: Redis, name: string, lua: string): LuaScript {
  // No numberOfKeys: the caller passes the key count first, so one script serves one key or several.
  redis.defineCommand(name, { lua });
  const command = (redis as unknown as Record<string, (...args: (string | number)[]) => Promise<unknown>>)[name];
  return (keys, args) => command.call(redis, keys.length, ...keys, ...args);
}
