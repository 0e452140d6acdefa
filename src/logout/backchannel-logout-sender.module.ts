import { Module } from '@nestjs/common';
import { ClientsModule } from '../clients/clients.module.js';
import { CommonModule } from '../common/common.module.js';
import { SigningModule } from '../signing/signing.module.js';
import { BackchannelLogoutSender } from './backchannel-logout.sender.js';
import { LogoutTokenIssuer } from './logout-token.issuer.js';
import { LogoutModule } from './logout.module.js';

/** The servers' part of back-channel logout: signing logout tokens and delivering them. */
@Module({
  imports: [CommonModule, LogoutModule, ClientsModule, SigningModule],
  providers: [BackchannelLogoutSender, LogoutTokenIssuer],
  exports: [BackchannelLogoutSender],
})
export class BackchannelLogoutSenderModule {}
