import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { CommonModule } from '../common/common.module.js';
import { appConfig } from '../config/app.config.js';
import { mailConfig } from '../config/mail.config.js';
import { UsersModule } from '../users/users.module.js';
import { AccountEmails } from './account-emails.service.js';
import { EmailLink } from './email-link.entity.js';
import { EmailLinkStore } from './email-link.store.js';
import { EmailLinks } from './email-links.service.js';

/**
 * The single-use links and the messages an administrator (or SCIM) sends: `mailer` is the module
 * that provides MAIL_SENDER (mail/'s MailSenderModule), given by whoever imports this one, so that
 * this folder does not depend on the transport's.
 */
@Module({})
export class EmailLinksModule {
  static register(mailer: Type): DynamicModule {
    return {
      module: EmailLinksModule,
      imports: [mailer, CommonModule, AuditModule, UsersModule, AccountsModule, TypeOrmModule.forFeature([EmailLink]), ConfigModule.forFeature(mailConfig), ConfigModule.forFeature(appConfig)],
      providers: [EmailLinkStore, EmailLinks, AccountEmails],
      exports: [mailer, EmailLinkStore, EmailLinks, AccountEmails],
    };
  }
}
