import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { AuthModule } from './auth/auth.module.js';
import { AuditModule } from './audit/audit.module.js';
import { CollectionsModule } from './collections/collections.module.js';
import { CommonModule } from './common/common.module.js';
import { appConfig } from './config/app.config.js';
import { apiConfig } from './config/api.config.js';
import { databaseConfig } from './config/database.config.js';
import { oauthConfig } from './config/oauth.config.js';
import { sessionConfig } from './config/session.config.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { KeysModule } from './keys/keys.module.js';
import { ResourcesModule } from './resources/resources.module.js';

@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [apiConfig, appConfig, databaseConfig, oauthConfig, sessionConfig] }),
    CommonModule,
    CollectionsModule,
    DatabaseModule,
    AuditModule,
    KeysModule,
    AuthModule,
    ResourcesModule,
    HealthModule,
  ],
})
export class AppModule {}
