import { appConfig } from '../config/app.config.js';
import { readDatabaseConfig } from '../config/database.config.js';
import { CommandFailed, required, UsageError, type StandaloneCommand } from './command.js';

/** A database URL as it may be printed: the password replaced (it would otherwise land in a terminal's scrollback or a CI log). */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** ALLOW_UNSAFE's entries, or none when the deployment's configuration does not even read. */
function allowedUnsafe(): string[] {
  try {
    return [...appConfig().allowUnsafe];
  } catch {
    return [];
  }
}

/**
 * `db:copy --to postgres://…`: the deployment's SQLite database (DATABASE_URL, or --from) copied
 * into an empty PostgreSQL database, all or nothing and verified (src/schema/copy/), then what to
 * change in the environment to run on it.
 */
export const dbCopyCommand: StandaloneCommand = {
  standalone: true,
  usage: 'db:copy --to postgres://USER:PASSWORD@HOST:PORT/DATABASE [--from sqlite:FILE] (default --from: DATABASE_URL)',
  options: { to: { type: 'string' }, from: { type: 'string' } },
  async run(flags) {
    const to = required(flags, 'to');
    if (!/^postgres(ql)?:\/\//.test(to)) throw new UsageError('--to must be a postgres:// or postgresql:// URL');
    const from = (flags.from as string | undefined) ?? readDatabaseConfig().url;
    if (!from.startsWith('sqlite:') || from.length === 'sqlite:'.length) {
      throw new UsageError(`db:copy copies a SQLite deployment; the source is ${withoutPassword(from)}: run it with that deployment's DATABASE_URL=sqlite:FILE, or pass --from sqlite:FILE`);
    }
    const { copyDatabase } = await import('../schema/copy/database-copy.js');
    const { CopyRefused } = await import('../schema/copy/postgres-target.store.js');
    let report;
    try {
      report = await copyDatabase(from.slice('sqlite:'.length), to, (line) => process.stderr.write(`latchkey: ${line}\n`));
    } catch (error) {
      if (error instanceof CopyRefused) throw new CommandFailed(`db:copy: ${error.message}; nothing was written to the target`);
      if ((error as NodeJS.ErrnoException).code === 'SQLITE_CANTOPEN') throw new CommandFailed(`db:copy: cannot open ${from}: no such database`);
      throw new CommandFailed(`db:copy failed and was rolled back, nothing was written to the target: ${(error as Error).message}`);
    }
    const unsafe = allowedUnsafe();
    return {
      from,
      to: withoutPassword(to),
      snapshot_at: report.snapshotAt.toISOString(),
      migrations_applied: report.migrationsApplied,
      tables: report.tables,
      total_rows: report.tables.reduce((sum, t) => sum + t.rows, 0),
      sequences_reset: report.sequences,
      environment: {
        set: { DATABASE_URL: withoutPassword(to) },
        ...(unsafe.includes('sqlite') ? { change: { ALLOW_UNSAFE: unsafe.filter((s) => s !== 'sqlite').join(',') || '(unset)' } } : {}),
        notes: [
          `The copy is the database as it was at ${report.snapshotAt.toISOString()}; anything the SQLite server wrote after that is not in it. Stop the server before copying (or copy again into a new, empty database) before you switch.`,
          'Keep every *_ENCRYPTION_KEY and SESSION_SECRET as they are: the copied rows are sealed with them. Keys Latchkey generated itself were copied with the database.',
          'The migrations are applied: MIGRATIONS_RUN is not needed. For several instances, also set REDIS_URL (rate limits shared) and size DATABASE_POOL_SIZE (docs/operations/scaling-limits.md).',
          'Then run `npx latchkey doctor` with the new environment.',
        ],
      },
    };
  },
};
