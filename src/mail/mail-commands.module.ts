import { Module } from '@nestjs/common';
import { EmailLinksModule } from '../email-links/email-links.module.js';
import { MailSenderModule } from './mail-sender.module.js';

/** What the mail commands of the CLI (users:invite, users:verify-email) add to its modules: the links and the transport, no pages. */
@Module({ imports: [MailSenderModule, EmailLinksModule.register(MailSenderModule)] })
export class MailCommandsModule {}
