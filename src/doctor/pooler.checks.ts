import type { DatabaseConfig } from '../config/database.config.js';
import { fail, ok, warn, type CheckResult } from './check.js';
import { hearsItsOwnNotification } from './deployment-database.store.js';

const POOL_MODE_FIX = 'docs/operations/connection-pooler.md';

/**
 * `pooler`: what DATABASE_URL reaches, told by whether it delivers notifications, against
 * DATABASE_POOL_MODE; then whether the connection that listens for changes (DATABASE_LISTEN_URL,
 * or DATABASE_URL) hears them, without which no instance keeps clients or tokens between requests.
 */
export async function poolerChecks(config: DatabaseConfig): Promise<CheckResult[]> {
  let sessions: boolean;
  try {
    sessions = await hearsItsOwnNotification(config.url);
  } catch (error) {
    return [fail('pooler', `Could not try LISTEN/NOTIFY through DATABASE_URL: ${(error as Error).message}`, 'Check DATABASE_URL.')];
  }
  const results: CheckResult[] = [];
  if (sessions && config.poolMode === 'session') {
    results.push(ok('pooler', 'DATABASE_URL keeps a session per connection (PostgreSQL itself, or a pooler in session mode): statements are prepared once per connection.'));
  } else if (sessions) {
    results.push(
      warn('pooler', 'DATABASE_POOL_MODE=transaction, but DATABASE_URL keeps a session per connection (a LISTEN there heard its own NOTIFY): no pooler in transaction mode is in front.', `Unset DATABASE_POOL_MODE: prepared statements are cheaper (${POOL_MODE_FIX}).`),
    );
  } else if (config.poolMode === 'session') {
    results.push(
      fail(
        'pooler',
        'DATABASE_URL looks like a pooler in transaction mode (PgBouncer pool_mode = transaction, RDS Proxy, Supavisor): a LISTEN there never heard its own NOTIFY. Named prepared statements fail through it ("prepared statement … does not exist").',
        `Set DATABASE_POOL_MODE=transaction, and DATABASE_LISTEN_URL to PostgreSQL itself or a session-mode pool (${POOL_MODE_FIX}).`,
      ),
    );
    return results;
  } else {
    results.push(ok('pooler', 'DATABASE_URL is a pooler in transaction mode, and DATABASE_POOL_MODE=transaction: statements are unnamed, nothing listens through it.'));
  }
  results.push(await listenCheck(config));
  return results;
}

/** `listen`: the connection ChangeNotifications opens, as the server would open it. */
async function listenCheck(config: DatabaseConfig): Promise<CheckResult> {
  const caches = config.rowCacheSeconds > 0;
  if (config.poolMode === 'transaction' && config.listenUrl === undefined) {
    const detail = 'DATABASE_POOL_MODE=transaction without DATABASE_LISTEN_URL: instances hear no change notifications, so they keep no client or token between requests.';
    return caches ? warn('listen', detail, `Set DATABASE_LISTEN_URL to PostgreSQL itself or a session-mode pool (${POOL_MODE_FIX}).`) : ok('listen', `${detail} (ROW_CACHE_SECONDS=0: nothing is kept anyway.)`);
  }
  const url = config.listenUrl ?? config.url;
  const name = config.listenUrl === undefined ? 'DATABASE_URL' : 'DATABASE_LISTEN_URL';
  try {
    if (await hearsItsOwnNotification(url)) return ok('listen', `Change notifications arrive through ${name}: instances keep clients and tokens between requests.`);
  } catch (error) {
    return fail('listen', `Could not reach ${name}: ${(error as Error).message}`, `Check ${name}.`);
  }
  return fail('listen', `A LISTEN through ${name} never heard its own NOTIFY: instances would keep nothing between requests.`, `Point ${name} at PostgreSQL itself or a session-mode pool (${POOL_MODE_FIX}).`);
}
