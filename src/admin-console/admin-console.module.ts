import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ClientsModule } from '../clients/clients.module.js';
import { mailConfig } from '../config/mail.config.js';
import { CommonModule } from '../common/common.module.js';
import { IdentityProvidersModule } from '../identity-providers/identity-providers.module.js';
import { KeysModule } from '../keys/keys.module.js';
import { ConsoleAuditController } from './console-audit.controller.js';
import { ConsoleClientActionsController } from './console-client-actions.controller.js';
import { ConsoleClientEditController } from './console-client-edit.controller.js';
import { ConsoleClient } from './console-client.js';
import { ConsoleClientsController } from './console-clients.controller.js';
import { ConsoleCookie } from './console-cookie.js';
import { ConsoleDashboardController } from './console-dashboard.controller.js';
import { ConsoleEnabled } from './console-enabled.guard.js';
import { ConsoleExceptionFilter } from './console-exception.filter.js';
import { ConsoleGroupMembersController } from './console-group-members.controller.js';
import { ConsoleGroupsController } from './console-groups.controller.js';
import { ConsoleIdentityProviderChangesController } from './console-identity-provider-changes.controller.js';
import { ConsoleIdentityProvidersController } from './console-identity-providers.controller.js';
import { ConsoleKeys } from './console-keys.js';
import { ConsoleKeysController } from './console-keys.controller.js';
import { ConsoleLiveSessionsController } from './console-live-sessions.controller.js';
import { ConsoleOpenId } from './console-openid.js';
import { ConsolePages } from './console-pages.js';
import { ConsolePeopleController } from './console-people.controller.js';
import { ConsolePersonActionsController } from './console-person-actions.controller.js';
import { ConsolePersonFormsController } from './console-person-forms.controller.js';
import { ConsolePersonLinksController } from './console-person-links.controller.js';
import { ConsolePersonRolesController } from './console-person-roles.controller.js';
import { ConsoleResourceServersController } from './console-resource-servers.controller.js';
import { ConsoleSessions } from './console-sessions.js';
import { ConsoleSignInController } from './console-sign-in.controller.js';
import { InProcessHttp } from './in-process-http.js';

/** The console's routes, by controller (test/e2e/admin-console checks every POST among them is a cookie form). */
export const CONSOLE_CONTROLLERS = [
  ConsoleSignInController,
  ConsoleDashboardController,
  ConsolePeopleController,
  ConsolePersonActionsController,
  ConsoleLiveSessionsController,
  ConsoleGroupsController,
  ConsoleGroupMembersController,
  ConsoleClientsController,
  ConsoleClientActionsController,
  ConsoleResourceServersController,
  ConsoleIdentityProvidersController,
  ConsoleIdentityProviderChangesController,
  ConsoleAuditController,
  // The people and client forms.
  ConsolePersonFormsController,
  ConsolePersonRolesController,
  ConsolePersonLinksController,
  ConsoleClientEditController,
  ConsoleKeysController,
];

/**
 * The admin console at /admin (issue 48): server-rendered pages on the admin API, signed in with
 * this server as an OpenID Connect client of its own. It reads and changes nothing itself: every
 * page calls the admin API with the administrator's access token, so AdminAccess decides. Off
 * (every route 404: ConsoleEnabled) with ADMIN_CONSOLE_ENABLED=false; the admin API stays.
 */
@Module({
  // The discovery document, the token and revocation endpoints and the admin API are this app's own routes, reached over HTTP (InProcessHttp).
  // The mail settings: whether to offer the emails a person's page sends (ConsolePeopleController).
  imports: [ClientsModule, CommonModule, IdentityProvidersModule, KeysModule, ConfigModule.forFeature(mailConfig)],
  controllers: CONSOLE_CONTROLLERS,
  providers: [ConsoleEnabled, ConsoleKeys, ConsoleCookie, ConsoleClient, ConsoleOpenId, InProcessHttp, ConsoleSessions, ConsolePages, ConsoleExceptionFilter],
})
export class AdminConsoleModule {}
