import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { ClientsModule } from '../clients/clients.module.js';
import { ConsentsModule } from '../consents/consents.module.js';
import { FactorsModule } from '../factors/factors.module.js';
import { IdentityProvidersModule } from '../identity-providers/identity-providers.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { ScopesModule } from '../scopes/scopes.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccountAccessForms } from './account-access-forms.js';
import { AccountForms } from './account-forms.js';
import { AccountOverview } from './account-overview.js';
import { AccountPage } from './account-page.js';
import { AccountController } from './account.controller.js';
import { SecurityEvents } from './security-events.js';

/**
 * The person's account page at /account (issue 48): profile, password, second factors and
 * passkeys, sessions, applications with access and recent security events, on the sign-in session
 * and pages of AuthModule (as passkeys/ and email-links/ are). Its changes go through the services
 * that own each (AccountsService, AccessWithdrawalService); enrolling one-time codes and adding a
 * passkey stay on their own pages (auth/interaction, passkeys/), linked from here.
 */
@Module({
  imports: [AuthModule, AccountsModule, AuditModule, ClientsModule, ConsentsModule, FactorsModule, IdentityProvidersModule, RateLimitModule, ScopesModule, SessionsModule, UsersModule],
  controllers: [AccountController],
  providers: [AccountPage, AccountOverview, AccountForms, AccountAccessForms, SecurityEvents],
})
export class AccountModule {}
