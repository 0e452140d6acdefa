import { Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module.js';
import { SubjectsModule } from '../openid/subjects.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { TokenStoreModule } from '../tokens/token-store.module.js';
import { BackchannelLogout } from './backchannel-logout.service.js';
import { LogoutDeliveryStoreModule } from './logout-delivery-store.module.js';
import { SessionRefreshTokens } from './session-refresh-tokens.js';

/**
 * What a session's end means for its clients (Back-Channel Logout 1.0): the outbox of the
 * notifications they are owed, and the revocation of the refresh tokens it held (§2.7). Also in
 * the CLI, whose commands end sessions too; the sending is BackchannelLogoutSenderModule's, in servers.
 */
@Module({
  imports: [CommonModule, LogoutDeliveryStoreModule, SessionsModule, SubjectsModule, TokenStoreModule],
  providers: [BackchannelLogout, SessionRefreshTokens],
  exports: [LogoutDeliveryStoreModule],
})
export class LogoutModule {}
