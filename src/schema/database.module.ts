import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { databaseConfig, type DatabaseConfigSlice } from '../config/database.config.js';
import { buildDataSourceOptions } from './data-source.options.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { RowCaches } from '../database/row-caches.js';
import { Transactions } from '../database/transactions.js';

// Global like the TypeORM connection it wraps: every module that writes may need Transactions, and
// a store that keeps rows per instance the change notifications and RowCaches.
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [databaseConfig.KEY],
      useFactory: (config: DatabaseConfigSlice) => ({
        ...buildDataSourceOptions(config),
        // Start-up fails fast with the driver's message instead of retrying for half a minute.
        retryAttempts: 0,
      }),
    }),
  ],
  providers: [Transactions, ChangeNotifications, RowCaches],
  exports: [Transactions, ChangeNotifications, RowCaches],
})
export class DatabaseModule {}
