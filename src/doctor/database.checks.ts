import { existsSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { Client } from '../clients/client.entity.js';
import { legacyGrantsOf, legacyGrantsWarning } from '../clients/legacy-grants.js';
import { GrantType } from '../common/oauth.constants.js';
import type { DatabaseConfig } from '../config/database.config.js';
import { buildDataSourceOptions } from '../schema/data-source.options.js';
import { MIGRATIONS } from '../schema/migrations/index.js';
import { SIGNING_ALGORITHMS } from '../signing/signing-algorithms.js';
import { SigningKey } from '../signing/signing-key.entity.js';
import { GENERATED_SIGNING_KEY_ENCRYPTION_NAME, signingKeyViews } from '../signing/signing-key-vault.js';
import { SealedBox } from '../common/sealed-box.js';
import { ServerKey } from '../keys/server-key.entity.js';
import { IdentityProvider } from '../identity-providers/identity-provider.entity.js';
import { fail, ok, skip, warn, type CheckResult } from './check.js';
import { DeploymentDatabaseStore } from './deployment-database.store.js';
import { poolerChecks } from './pooler.checks.js';

/** Round trips timed for the latency check; the median is reported. */
const PINGS = 5;
const LATENCY_WARN_MS = 50;
const LATENCY_FAIL_MS = 500;
/** Instances disagreeing with the database by more than this see codes and tokens expire early or late. */
const CLOCK_WARN_MS = 1000;
const CLOCK_FAIL_MS = 10_000;

const DATABASE_IDS = ['clock', 'pool', 'pooler', 'listen', 'migrations', 'signing_keys', 'legacy_grants'];

/** What the database holds that later checks look at, beyond it: none when it cannot be read. */
export interface DeploymentRows {
  /** The upstream identity providers, enabled or not (identity-provider.checks.ts). */
  identityProviders: IdentityProvider[];
}

const NO_ROWS: DeploymentRows = { identityProviders: [] };

/**
 * The database as the server would use it: reachable, fast, with room for another instance, on the
 * same clock, with every migration applied; then what it holds that an operator should know (the
 * signing keys' rotation, clients allowed legacy grants). Read only: it applies no migration and
 * generates no key, and a SQLite file that does not exist is not created.
 */
export async function databaseChecks(config: DatabaseConfig, signingKeyEncryptionKeys: readonly Buffer[], results: CheckResult[]): Promise<DeploymentRows> {
  if (config.dialect === 'sqlite' && !existsSync(config.sqlitePath!)) {
    results.push(fail('database', `The SQLite database ${config.sqlitePath} does not exist.`, 'Check DATABASE_URL; a new deployment creates it at its first start (or run npx latchkey migrations:run).'));
    for (const id of DATABASE_IDS) results.push(skip(id, 'No database to check.'));
    return NO_ROWS;
  }
  const dataSource = new DataSource({ ...buildDataSourceOptions({ ...config, migrationsRun: false, logging: false }), ...(config.dialect === 'postgres' ? { poolSize: 1 } : {}) } as ConstructorParameters<typeof DataSource>[0]);
  try {
    await dataSource.initialize();
  } catch (error) {
    results.push(fail('database', `Cannot connect: ${(error as Error).message}`, 'Check DATABASE_URL (host, port, credentials, database name) and that the database accepts connections from this host.'));
    for (const id of DATABASE_IDS) results.push(skip(id, 'The database is unreachable.'));
    return NO_ROWS;
  }
  try {
    const store = new DeploymentDatabaseStore(dataSource);
    const pings: number[] = [];
    for (let i = 0; i < PINGS; i++) pings.push(await store.ping());
    const latency = pings.sort((a, b) => a - b)[Math.floor(PINGS / 2)];
    const detail = `${config.dialect === 'postgres' ? 'PostgreSQL' : 'SQLite'} answers in ${latency.toFixed(1)} ms (median of ${PINGS}).`;
    const slow = 'Every token request waits for the database several times: move it closer to the instances, or find what loads it.';
    results.push(latency >= LATENCY_FAIL_MS ? fail('database', detail, slow) : latency >= LATENCY_WARN_MS ? warn('database', detail, slow) : ok('database', detail));
    results.push(config.dialect === 'postgres' ? await clockCheck(store) : ok('clock', "SQLite keeps no clock of its own: the server's is this machine's."));
    results.push(config.dialect === 'postgres' ? poolCheck(await store.connections(), config.poolSize) : ok('pool', 'SQLite: one connection per instance, no pool.'));
    if (config.dialect === 'postgres') results.push(...(await poolerChecks(config)));
    else results.push(ok('pooler', 'SQLite: no pooler.'), ok('listen', 'SQLite: nothing is kept between requests, so nothing listens.'));
    const migrations = migrationCheck(await store.appliedMigrations());
    results.push(migrations);
    if (migrations.status === 'fail') {
      results.push(skip('signing_keys', 'The schema is not up to date.'), skip('legacy_grants', 'The schema is not up to date.'));
      return NO_ROWS;
    }
    // The box the vault opens them with: the configured keys, or the one generated into server_keys (SigningKeyVault.sealedBox).
    const generated = await dataSource.manager.findOneBy(ServerKey, { name: GENERATED_SIGNING_KEY_ENCRYPTION_NAME });
    const sealing = signingKeyEncryptionKeys.length > 0 ? [...signingKeyEncryptionKeys] : generated ? [Buffer.from(generated.value, 'base64')] : [];
    results.push(signingKeyCheck(await dataSource.manager.find(SigningKey), new SealedBox(GENERATED_SIGNING_KEY_ENCRYPTION_NAME, sealing), signingKeyEncryptionKeys.length > 0));
    results.push(legacyGrantCheck(await dataSource.manager.find(Client, { order: { createdAt: 'ASC' } })));
    return { identityProviders: await dataSource.manager.find(IdentityProvider, { order: { id: 'ASC' } }) };
  } finally {
    await dataSource.destroy();
  }
}

async function clockCheck(store: DeploymentDatabaseStore): Promise<CheckResult> {
  const before = Date.now();
  const databaseNow = (await store.postgresNow()).getTime();
  const after = Date.now();
  const skew = databaseNow - (before + after) / 2;
  const detail = `This machine's clock is ${Math.abs(skew).toFixed(0)} ms ${skew > 0 ? 'behind' : 'ahead of'} PostgreSQL's.`;
  const fix = "Run NTP (chrony, systemd-timesyncd) on every instance and on the database host: expiry times are compared with the database's now().";
  return Math.abs(skew) >= CLOCK_FAIL_MS ? fail('clock', detail, fix) : Math.abs(skew) >= CLOCK_WARN_MS ? warn('clock', detail, fix) : ok('clock', detail);
}

/** Each instance opens DATABASE_POOL_SIZE connections and one more to hear of changes (docs/operations/scaling-limits.md). */
function poolCheck(connections: { max: number; reserved: number; open: number }, poolSize: number): CheckResult {
  const perInstance = poolSize + 1;
  const free = connections.max - connections.reserved - connections.open;
  const detail = `${connections.open} of ${connections.max - connections.reserved} connections in use; each instance needs ${perInstance} (DATABASE_POOL_SIZE + 1): room for ${Math.max(0, Math.floor(free / perInstance))} more.`;
  const fix = "Raise PostgreSQL's max_connections, lower DATABASE_POOL_SIZE, or put PgBouncer in front (docs/operations/scaling-limits.md).";
  if (free < perInstance) return fail('pool', `${detail} Another instance (or a restart while the old one drains) would not get its pool.`, fix);
  if (free < 2 * perInstance) return warn('pool', detail, fix);
  return ok('pool', detail);
}

function migrationCheck(applied: string[]): CheckResult {
  const known = MIGRATIONS.map((m) => new m().name);
  const unknown = applied.filter((name) => !known.includes(name));
  if (unknown.length > 0) return fail('migrations', `The database has migrations this version does not know (${unknown.join(', ')}): a newer Latchkey migrated it.`, 'Run the Latchkey version that migrated it; never an older one on a newer schema.');
  const pending = known.filter((name) => !applied.includes(name));
  if (pending.length > 0) return fail('migrations', `${pending.length} migration(s) not applied: ${pending.join(', ')}.`, 'Run npx latchkey migrations:run (node dist/src/cli/main.js migrations:run in the image) once, before starting this version (docs/operations/upgrades.md).');
  return ok('migrations', `All ${known.length} migrations are applied.`);
}

/**
 * Core §10.1.1: keys are published before they sign. Every algorithm needs a key that signs (or
 * will), whose private half opens with the encryption keys the instances have: one that does not
 * is published and never signs (SigningKeyVault.loadPublished).
 */
function signingKeyCheck(keys: SigningKey[], box: SealedBox, configured: boolean): CheckResult {
  if (keys.length === 0) return ok('signing_keys', 'No signing keys yet: the first start generates one per algorithm.');
  const sealedAway = keys.filter((key) => (key.publishedUntil === null || key.publishedUntil.getTime() > Date.now()) && box.open(key.privateJwk, key.kid) === undefined);
  if (sealedAway.length > 0) {
    return fail(
      'signing_keys',
      `The private half of ${sealedAway.map((key) => `${key.alg} key ${key.kid}`).join(', ')} does not open with ${configured ? 'SIGNING_KEY_ENCRYPTION_KEY' : 'the generated encryption key'}: published, it can never sign.`,
      'Put the key it was sealed with back into SIGNING_KEY_ENCRYPTION_KEY, after the new one (comma-separated, newest first), or run npx latchkey keys:rotate (docs/operations/key-rotation.md).',
    );
  }
  const views = signingKeyViews(keys, new Date());
  const summary = SIGNING_ALGORITHMS.map((alg) => {
    const signing = views.find((v) => v.alg === alg && v.state === 'signing');
    const next = views.find((v) => v.alg === alg && v.state === 'next');
    return { alg, signing, next, line: `${alg}: ${signing ? `generation ${signing.generation} signs since ${signing.activates_at.slice(0, 10)}` : 'no key signs'}${next ? `, generation ${next.generation} signs from ${next.activates_at}` : ''}` };
  });
  const detail = summary.map((s) => s.line).join('; ') + '.';
  const missing = summary.filter((s) => !s.signing && !s.next).map((s) => s.alg);
  if (missing.length > 0) return fail('signing_keys', `${detail} Nothing can sign ${missing.join(', ')} tokens.`, `Run npx latchkey keys:rotate --alg ${missing[0]} (docs/operations/key-rotation.md).`);
  return ok('signing_keys', detail);
}

/** RFC 9700 §2.4: the password grant MUST NOT be used (a failure); §2.1.2: the implicit grant SHOULD NOT (a warning). */
function legacyGrantCheck(clients: Client[]): CheckResult {
  const allowed = clients.filter((client) => legacyGrantsOf(client).length > 0);
  if (allowed.length === 0) return ok('legacy_grants', 'No client is allowed the implicit or password grant.');
  const detail = allowed.map((client) => legacyGrantsWarning(client)).join('; ') + '.';
  const fix = 'Move each application to the authorization code grant with PKCE, then register it again without those grant types (docs/reference/legacy-grants.md).';
  return allowed.some((client) => client.grantTypes.includes(GrantType.Password)) ? fail('legacy_grants', detail, fix) : warn('legacy_grants', detail, fix);
}
