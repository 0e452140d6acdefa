import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { mailConfig } from '../config/mail.config.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { UsersModule } from '../users/users.module.js';
import { CsrfCheck } from './csrf-check.js';
import { EmailAddressFlow } from './email-address.flow.js';
import { EmailLinksController } from './email-links.controller.js';
import { EmailLinksModule } from './email-links.module.js';
import { EmailPages } from './email-pages.js';
import { EmailThrottle } from './email-throttle.js';
import { InvitationFlow } from './invitation.flow.js';
import { PasswordForms } from './password-forms.js';
import { PasswordResetFlow } from './password-reset.flow.js';
import { RegistrationFlow } from './registration.flow.js';

/** The email pages (issue 46) on the sign-in session of AuthModule, as passkeys/ and device/ are. */
@Module({})
export class EmailPagesModule {
  static register(mailer: Type): DynamicModule {
    return {
      module: EmailPagesModule,
      imports: [EmailLinksModule.register(mailer), AuthModule, RateLimitModule, AuditModule, UsersModule, AccountsModule, ConfigModule.forFeature(mailConfig)],
      controllers: [EmailLinksController],
      providers: [EmailPages, CsrfCheck, EmailThrottle, PasswordForms, PasswordResetFlow, InvitationFlow, EmailAddressFlow, RegistrationFlow],
    };
  }
}
