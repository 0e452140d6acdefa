import { AdminApiModule } from './admin/admin-api.module.js';
import { AdminConsoleModule } from './admin-console/admin-console.module.js';
import { adminConsoleConfig } from './config/admin-console.config.js';
import { DoctorApiModule } from './doctor/doctor-api.module.js';
import { PurgeApiModule } from './housekeeping/purge-api.module.js';
import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { AccountsModule } from './accounts/accounts.module.js';
import { AuthModule } from './auth/auth.module.js';
import { PasskeysModule } from './passkeys/passkeys.module.js';
import { AccountModule } from './account/account.module.js';
import { DeviceModule } from './device/device.module.js';
import { AuditModule } from './audit/audit.module.js';
import { CollectionsModule } from './collections/collections.module.js';
import { CommonModule } from './common/common.module.js';
import { appConfig } from './config/app.config.js';
import { apiConfig } from './config/api.config.js';
import { corsConfig } from './config/cors.config.js';
import { CorsModule } from './cors/cors.module.js';
import { databaseConfig } from './config/database.config.js';
import { housekeepingConfig } from './config/housekeeping.config.js';
import { macTokenConfig } from './config/mac-token.config.js';
import { openIdConfig } from './config/openid.config.js';
import { parConfig } from './config/par.config.js';
import { deviceConfig } from './config/device.config.js';
import { factorsConfig } from './config/factors.config.js';
import { dpopConfig } from './config/dpop.config.js';
import { clientAuthConfig } from './config/client-auth.config.js';
import { fapiConfig } from './config/fapi.config.js';
import { logoutConfig } from './config/logout.config.js';
import { outboundConfig } from './config/outbound.config.js';
import { LogoutModule } from './logout/logout.module.js';
import { BackchannelLogoutSenderModule } from './logout/backchannel-logout-sender.module.js';
import { legacyGrantsConfig } from './config/legacy-grants.config.js';
import { metricsConfig } from './config/metrics.config.js';
import { oauthConfig } from './config/oauth.config.js';
import { rateLimitConfig } from './config/rate-limit.config.js';
import { scimConfig } from './config/scim.config.js';
import { redisConfig } from './config/redis.config.js';
import { sessionConfig } from './config/session.config.js';
import { passkeyConfig } from './config/passkey.config.js';
import { mailConfig } from './config/mail.config.js';
import { DatabaseModule } from './schema/database.module.js';
import { SqliteCheckpointer } from './database/sqlite-checkpointer.js';
import { HealthModule } from './health/health.module.js';
import { HousekeepingModule } from './housekeeping/housekeeping.module.js';
import { KeysModule } from './keys/keys.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { ResourcesModule } from './resources/resources.module.js';
import { FederationModule } from './federation/federation.module.js';
import { GroupsModule } from './groups/groups.module.js';
import { ProvisioningModule } from './provisioning/provisioning.module.js';
import { MailModule } from './mail/mail.module.js';
import { MailSenderModule } from './mail/mail-sender.module.js';
import { AdminInvitationsModule } from './email-links/admin-invitations.module.js';

@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [adminConsoleConfig, apiConfig, appConfig, clientAuthConfig, corsConfig, databaseConfig, deviceConfig, dpopConfig, factorsConfig, fapiConfig, housekeepingConfig, legacyGrantsConfig, logoutConfig, outboundConfig, macTokenConfig, metricsConfig, oauthConfig, openIdConfig, parConfig, rateLimitConfig, redisConfig, sessionConfig, passkeyConfig, mailConfig, scimConfig] }),
    CommonModule,
    MetricsModule,
    CollectionsModule,
    DatabaseModule,
    RateLimitModule,
    AuditModule,
    KeysModule,
    AuthModule,
    CorsModule,
    PasskeysModule,
    AccountModule,
    FederationModule,
    GroupsModule,
    ProvisioningModule,
    MailModule,
    DeviceModule,
    LogoutModule,
    BackchannelLogoutSenderModule,
    AccountsModule,
    AdminApiModule.register(AdminInvitationsModule.register(MailSenderModule)),
    AdminConsoleModule,
    DoctorApiModule,
    PurgeApiModule,
    ResourcesModule,
    HealthModule,
    HousekeepingModule,
  ],
  // The server's, not the CLI's: a short command leaves checkpoints to SQLite.
  providers: [SqliteCheckpointer],
})
export class AppModule {}
