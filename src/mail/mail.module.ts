import { Module } from '@nestjs/common';
import { EmailPagesModule } from '../email-links/email-pages.module.js';
import { MailSenderModule } from './mail-sender.module.js';

/**
 * Email (issue 46): the SMTP transport, and the pages whose links it sends (forgotten password,
 * invitations, address verification and change, self-registration), given this transport.
 */
@Module({ imports: [MailSenderModule, EmailPagesModule.register(MailSenderModule)] })
export class MailModule {}
