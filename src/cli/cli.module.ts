import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ClientsModule } from '../clients/clients.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { CollectionsModule } from '../collections/collections.module.js';
import { CommonModule } from '../common/common.module.js';
import { apiConfig } from '../config/api.config.js';
import { databaseConfig } from '../config/database.config.js';
import { housekeepingConfig } from '../config/housekeeping.config.js';
import { oauthConfig } from '../config/oauth.config.js';
import { sessionConfig } from '../config/session.config.js';
import { DatabaseModule } from '../database/database.module.js';
import { PurgeModule } from '../housekeeping/purge.module.js';
import { UsersModule } from '../users/users.module.js';

/** What the admin CLI needs: the same configuration and database as the server, no HTTP. */
@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [apiConfig, databaseConfig, housekeepingConfig, oauthConfig, sessionConfig] }),
    CommonModule,
    CollectionsModule,
    DatabaseModule,
    AuditModule,
    UsersModule,
    ClientsModule,
    PurgeModule,
  ],
})
export class CliModule {}
