import type { Logger } from 'typeorm';

/** One statement as TypeORM logged it, with its parameters. */
export interface LoggedStatement {
  query: string;
  parameters?: unknown[];
}

/**
 * A TypeORM logger that keeps every statement it is told of in `sent` (for a DataSource built with
 * `logging: ['query']`), so that a test can EXPLAIN exactly what a store sent; everything else it
 * drops.
 */
export function recordingLogger(): { sent: LoggedStatement[]; logger: Logger } {
  const sent: LoggedStatement[] = [];
  const logger: Logger = {
    logQuery: (query, parameters) => void sent.push({ query, parameters: parameters as unknown[] | undefined }),
    logQueryError: () => undefined,
    logQuerySlow: () => undefined,
    logSchemaBuild: () => undefined,
    logMigration: () => undefined,
    log: () => undefined,
  };
  return { sent, logger };
}
