import { DataSource } from 'typeorm';
import { readDatabaseConfig } from '../config/database.config.js';
import { buildDataSourceOptions } from './data-source.options.js';

/** A DataSource built from the environment, for TypeORM's CLI (via ormconfig.ts). */
export function createDataSourceFromEnv(): DataSource {
  return new DataSource(buildDataSourceOptions(readDatabaseConfig()));
}
