import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { CodesModule } from '../codes/codes.module.js';
import { CommonModule } from '../common/common.module.js';
import { ReplayModule } from '../replay/replay.module.js';
import { IdempotencyKeyStoreModule } from '../idempotency/idempotency-key-store.module.js';
import { LogoutDeliveryStoreModule } from '../logout/logout-delivery-store.module.js';
import { DeviceCodesModule } from '../device-codes/device-codes.module.js';
import { EmailLinkStoreModule } from '../email-links/email-link-store.module.js';
import { InstancesModule } from '../instances/instances.module.js';
import { PushedRequestsModule } from '../pushed-requests/pushed-requests.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { TokenStoreModule } from '../tokens/token-store.module.js';
import { PurgeService } from './purge.service.js';

/** The purge of expired codes, tokens, nonces, sessions, pushed requests, single-use JWTs, device requests, Idempotency-Keys, email links and instances long gone, without a schedule: what the CLI's `purge` command and the admin API's POST /housekeeping/purge use. */
@Module({ imports: [AuditModule, CommonModule, CodesModule, TokenStoreModule, SessionsModule, LogoutDeliveryStoreModule, PushedRequestsModule, ReplayModule, DeviceCodesModule, IdempotencyKeyStoreModule, EmailLinkStoreModule, InstancesModule], providers: [PurgeService], exports: [PurgeService] })
export class PurgeModule {}
