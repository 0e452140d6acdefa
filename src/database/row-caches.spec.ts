import type { DatabaseConfig } from '../config/database.config.js';
import type { ChangeNotifications } from './change-notifications.js';
import { RowCaches } from './row-caches.js';

describe(RowCaches.name, () => {
  const notifications = { hearing: true, subscribe: () => undefined } as unknown as ChangeNotifications;
  const config = { dialect: 'postgres', rowCacheSeconds: 60 } as DatabaseConfig;

  it('creates each cache with a budget in MiB and reports its numbers by name', async () => {
    const caches = new RowCaches(notifications, config);
    const tokens = caches.create('tokens', 'token_changes', 64);
    caches.create('clients', 'client_changes', 0);
    await tokens.row('a', async () => ({ id: 'a' }));
    await tokens.row('a', async () => ({ id: 'a' }));
    expect(caches.stats()).toEqual([
      ['tokens', expect.objectContaining({ hits: 1, misses: 1, entries: 1, budgetBytes: 64 * 1024 * 1024 })],
      ['clients', expect.objectContaining({ hits: 0, entries: 0, budgetBytes: 0 })],
    ]);
  });

  it('refuses a second cache of one name (its metrics would mix)', () => {
    const caches = new RowCaches(notifications, config);
    caches.create('tokens', 'token_changes', 1);
    expect(() => caches.create('tokens', 'token_changes', 1)).toThrow('tokens');
  });
});
