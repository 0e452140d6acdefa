import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { INVITATION_SENDER } from '../admin/people/invitation-sender.js';
import { AccountInvitationSender } from './account-invitation-sender.js';
import { EmailLinksModule } from './email-links.module.js';

/** The admin API's invitations (issue 48) on the links and the transport `mailer` provides (mail/'s MailSenderModule). */
@Module({})
export class AdminInvitationsModule {
  static register(mailer: Type): DynamicModule {
    return {
      module: AdminInvitationsModule,
      imports: [EmailLinksModule.register(mailer)],
      providers: [AccountInvitationSender, { provide: INVITATION_SENDER, useExisting: AccountInvitationSender }],
      exports: [INVITATION_SENDER],
    };
  }
}
