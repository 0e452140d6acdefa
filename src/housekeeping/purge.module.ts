import { Module } from '@nestjs/common';
import { CodesModule } from '../codes/codes.module.js';
import { CommonModule } from '../common/common.module.js';
import { LogoutDeliveryStoreModule } from '../logout/logout-delivery-store.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { TokenStoreModule } from '../tokens/token-store.module.js';
import { PurgeService } from './purge.service.js';

/** The purge of expired codes, tokens, nonces and sessions, without a schedule: what the CLI's `purge` command uses. */
@Module({ imports: [CommonModule, CodesModule, TokenStoreModule, SessionsModule, LogoutDeliveryStoreModule], providers: [PurgeService], exports: [PurgeService] })
export class PurgeModule {}
