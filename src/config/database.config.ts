import { registerAs, type ConfigType } from '@nestjs/config';
import { IsBooleanString, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { ConfigValidationError, validateEnv } from './validate-env.js';

export type DatabaseDialect = 'sqlite' | 'postgres';

class DatabaseEnv {
  /** postgres://user:pass@host:port/db, or sqlite:<file> (default sqlite:data/latchkey.sqlite). */
  @IsOptional() @Matches(/^(postgres|postgresql):\/\/|^sqlite:.+/, { message: 'DATABASE_URL must start with postgres://, postgresql:// or sqlite:' })
  DATABASE_URL?: string;

  /**
   * PostgreSQL: where the one connection per instance that LISTENs for change notifications
   * connects (default DATABASE_URL): LISTEN needs a session of its own, which a pooler in
   * transaction mode (PgBouncer) does not keep, so it may reach PostgreSQL directly or through a
   * session-mode pool while DATABASE_URL goes through the pooler.
   */
  @IsOptional() @Matches(/^(postgres|postgresql):\/\//, { message: 'DATABASE_LISTEN_URL must start with postgres:// or postgresql://' })
  DATABASE_LISTEN_URL?: string;

  /**
   * What DATABASE_URL reaches: PostgreSQL itself or a pooler in session mode (`session`, the
   * default), or a pooler in transaction mode (`transaction`: PgBouncer's pool_mode = transaction,
   * RDS Proxy, Supavisor, PgCat), which hands each transaction any server connection. Then no
   * statement is prepared by name (a named statement lives on one server connection: the next
   * transaction may not find it, or find it already there), nothing LISTENs through DATABASE_URL,
   * and no session setting is made at connection start (docs/operations/connection-pooler.md).
   */
  @IsOptional() @IsIn(['session', 'transaction'], { message: 'DATABASE_POOL_MODE must be session or transaction' })
  DATABASE_POOL_MODE?: string;

  /** PostgreSQL schema holding Latchkey's tables (default: public). */
  @IsOptional() @IsString() @Matches(/^[a-z_][a-z0-9_]{0,62}$/, { message: 'DATABASE_SCHEMA must be a plain lower-case identifier' })
  DATABASE_SCHEMA?: string;

  @IsOptional() @IsInt() @Min(1) @Max(200)
  DATABASE_POOL_SIZE?: number;

  @IsOptional() @IsBooleanString()
  MIGRATIONS_RUN?: string;

  /** PostgreSQL: how long an instance may keep a client's or an access token's row between changes it is told of (src/database/notified-cache.ts); 0 turns the caches off. */
  @IsOptional() @IsInt() @Min(0) @Max(3600)
  ROW_CACHE_SECONDS?: number;

  /**
   * PostgreSQL: the memory (MiB, estimated) each instance may spend on access tokens' rows, and on
   * clients' rows; past it the least recently used go (issue 47). 0 turns that cache off. At most
   * 4096: more is past a default Node heap, a typo rather than a plan.
   */
  @IsOptional() @IsInt() @Min(0) @Max(4096)
  TOKEN_CACHE_MB?: number;

  @IsOptional() @IsInt() @Min(0) @Max(4096)
  CLIENT_CACHE_MB?: number;

  @IsOptional() @IsBooleanString()
  DATABASE_LOGGING?: string;
}

const DEFAULT_SQLITE_URL = 'sqlite:data/latchkey.sqlite';

/** The database a URL names (DATABASE_URL's syntax is checked where the configuration is read). */
function dialectOf(url: string | undefined): DatabaseDialect {
  return (url ?? DEFAULT_SQLITE_URL).startsWith('sqlite:') ? 'sqlite' : 'postgres';
}

/** Reads the database settings; shared by the Nest app, ormconfig.ts and the CLI. */
export function readDatabaseConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = validateEnv(DatabaseEnv, env);
  const url = parsed.DATABASE_URL ?? DEFAULT_SQLITE_URL;
  const dialect = dialectOf(url);
  const poolMode = parsed.DATABASE_POOL_MODE === 'transaction' ? 'transaction' : 'session';
  if (dialect === 'postgres' && poolMode === 'transaction' && parsed.DATABASE_SCHEMA !== undefined) {
    // The schema is set by a startup parameter (options=-c search_path=…), which PgBouncer refuses
    // or, told to ignore it, drops: every query would then run in the wrong schema.
    throw new ConfigValidationError([
      "DATABASE_SCHEMA: cannot be used with DATABASE_POOL_MODE=transaction (a transaction pooler does not pass the search_path on); give Latchkey a database of its own, or set its role's search_path (ALTER ROLE latchkey SET search_path = …)",
    ]);
  }
  return {
    url,
    dialect,
    sqlitePath: dialect === 'sqlite' ? url.slice('sqlite:'.length) : undefined,
    /** The LISTEN connection's URL (ChangeNotifications); undefined: the pool's own settings. */
    listenUrl: dialect === 'postgres' ? parsed.DATABASE_LISTEN_URL : undefined,
    schema: parsed.DATABASE_SCHEMA,
    /** session: PostgreSQL directly, or a session pool; transaction: a transaction pool (no named statements, no LISTEN through it). */
    poolMode: dialect === 'postgres' ? poolMode : ('session' as const),
    poolSize: parsed.DATABASE_POOL_SIZE ?? 10,
    rowCacheSeconds: parsed.ROW_CACHE_SECONDS ?? 60,
    tokenCacheMb: parsed.TOKEN_CACHE_MB ?? 64,
    clientCacheMb: parsed.CLIENT_CACHE_MB ?? 16,
    // The embedded SQLite default sets itself up on first start; PostgreSQL deployments
    // choose (npm run migration:run, or MIGRATIONS_RUN=true).
    migrationsRun: parsed.MIGRATIONS_RUN !== undefined ? parsed.MIGRATIONS_RUN === 'true' : dialect === 'sqlite',
    logging: parsed.DATABASE_LOGGING === 'true',
  };
}

export type DatabaseConfig = ReturnType<typeof readDatabaseConfig>;

/**
 * Column types differ between the two databases (timestamptz and uuid exist only in PostgreSQL),
 * and TypeORM reads them when entity classes are declared; the dialect is therefore fixed per process.
 * Read from the URL alone, as readDatabaseConfig does, without validating the other settings here:
 * a wrong one is reported where the configuration is read (start-up, doctor), not at import.
 */
export const DATABASE_DIALECT: DatabaseDialect = dialectOf(process.env.DATABASE_URL);

export const databaseConfig = registerAs('database', () => readDatabaseConfig());
export type DatabaseConfigSlice = ConfigType<typeof databaseConfig>;
