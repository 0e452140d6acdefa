import { Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module.js';
import { IdempotencyKeyStoreModule } from './idempotency-key-store.module.js';
import { IdempotentWrites } from './idempotent-writes.js';

/** Idempotency-Key for the data API's writes, over the keys' table shared by every instance. */
@Module({
  imports: [CommonModule, IdempotencyKeyStoreModule],
  providers: [IdempotentWrites],
  exports: [IdempotentWrites],
})
export class IdempotencyModule {}
