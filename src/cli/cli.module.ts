import { Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule, registerAs } from '@nestjs/config';
import { ClientsModule } from '../clients/clients.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { CollectionsModule } from '../collections/collections.module.js';
import { CommonModule } from '../common/common.module.js';
import { apiConfig } from '../config/api.config.js';
import { appConfig } from '../config/app.config.js';
import { fapiConfig } from '../config/fapi.config.js';
import { databaseConfig, readDatabaseConfig } from '../config/database.config.js';
import { housekeepingConfig } from '../config/housekeeping.config.js';
import { oauthConfig } from '../config/oauth.config.js';
import { openIdConfig } from '../config/openid.config.js';
import { parConfig } from '../config/par.config.js';
import { deviceConfig } from '../config/device.config.js';
import { logoutConfig } from '../config/logout.config.js';
import { outboundConfig } from '../config/outbound.config.js';
import { sessionConfig } from '../config/session.config.js';
import { DatabaseModule } from '../schema/database.module.js';
import { PurgeModule } from '../housekeeping/purge.module.js';
import { UsersModule } from '../users/users.module.js';
import { FactorRecordsModule } from '../factors/factor-records.module.js';
import { AccountsModule } from '../accounts/accounts.module.js';

/**
 * The database settings for `migrations:run`: the command applies the migrations itself, so the
 * connection must not apply them first (on SQLite it would, by default, and the command would then
 * report nothing applied). The same namespace as databaseConfig, whose place it takes.
 */
const databaseConfigWithoutMigrations = registerAs('database', () => ({ ...readDatabaseConfig(), migrationsRun: false }));

/** What the admin CLI needs: the same configuration and database as the server, no HTTP. */
@Module({})
export class CliModule {
  /**
   * The application a command needs. The modules only some commands use are imported here, when
   * such a command runs, not with this file: a call loads only its own part of the application
   * (issue 49: a CLI call answers at once).
   */
  static async forCommand(command: string): Promise<DynamicModule> {
    const database = command === 'migrations:run' ? databaseConfigWithoutMigrations : databaseConfig;
    const when = async <T>(needed: boolean, load: () => Promise<T>): Promise<T[]> => (needed ? [await load()] : []);
    const users = command.startsWith('users:');
    // Only the keys commands load the signing keys (which generates the first ones on a new database).
    const signing = await when(command.startsWith('keys:'), async () => (await import('../signing/signing.module.js')).SigningModule);
    // Commands that end sessions (users:*) owe clients back-channel logout notifications, which servers send.
    const logout = await when(users, async () => (await import('../logout/logout.module.js')).LogoutModule);
    const resources = await when(command.startsWith('resources:'), async () => (await import('../resource-servers/resource-servers.module.js')).ResourceServersModule);
    // Upstream identity providers (issue 45): their commands, a person's links (users:*) and the clients' sign-in rules.
    const upstream = await when(command.startsWith('idps:') || users || command === 'clients:sign-in', async () => (await import('../identity-providers/identity-providers.module.js')).IdentityProvidersModule);
    // Groups (issue 46): their commands and the clients' group settings.
    const groups = await when(command.startsWith('groups:') || command === 'clients:groups', async () => (await import('../groups/groups.module.js')).GroupsModule);
    // Administrator roles (issue 48).
    const adminRoles = await when(command === 'users:roles', async () => (await import('../admin/admin-roles.module.js')).AdminRolesModule);
    // What an administrator does to a person (issue 48): the users:* commands go through the admin API's service.
    const administration = await when(users, async () => (await import('../admin/people/account-administration.module.js')).AccountAdministrationModule);
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [apiConfig, database, deviceConfig, fapiConfig, housekeepingConfig, logoutConfig, outboundConfig, oauthConfig, openIdConfig, parConfig, sessionConfig, ...(resources.length + upstream.length > 0 ? [appConfig] : [])] }),
        CommonModule,
        CollectionsModule,
        DatabaseModule,
        AuditModule,
        UsersModule,
        FactorRecordsModule,
        AccountsModule,
        ClientsModule,
        PurgeModule,
        ...signing,
        ...logout,
        ...resources,
        ...upstream,
        ...groups,
        ...adminRoles,
        ...administration,
      ],
    };
  }
}
