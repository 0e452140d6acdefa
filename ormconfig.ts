/**
 * TypeORM CLI entry point: `npx typeorm -d dist/ormconfig.js migration:show`.
 * It re-exports the one DataSource definition shared by the app and Latchkey's CLI.
 */
import { createDataSourceFromEnv } from './src/schema/data-source.js';

export default createDataSourceFromEnv();
