import { Module } from '@nestjs/common';
import { IdempotencyKeyStore } from './idempotency-key.store.js';

/** The idempotency_keys table alone: what the purge needs, without the data API's configuration. */
@Module({ providers: [IdempotencyKeyStore], exports: [IdempotencyKeyStore] })
export class IdempotencyKeyStoreModule {}
