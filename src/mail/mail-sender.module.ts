import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { appConfig } from '../config/app.config.js';
import { mailConfig } from '../config/mail.config.js';
import { MAIL_SENDER } from '../email-links/mail-sender.js';
import { MailService } from './mail.service.js';
import { MailTemplates } from './mail-templates.js';

/** The SMTP transport and the templates, as the MAIL_SENDER that email-links/ sends through. */
@Module({
  imports: [ConfigModule.forFeature(mailConfig), ConfigModule.forFeature(appConfig)],
  providers: [MailTemplates, MailService, { provide: MAIL_SENDER, useExisting: MailService }],
  exports: [MAIL_SENDER, MailService],
})
export class MailSenderModule {}
