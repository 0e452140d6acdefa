import { Module } from '@nestjs/common';
import { DpopProofUseStore } from './dpop-proof-use.store.js';

/** The replay table alone: what the purge needs, without the nonce key and the verifier. */
@Module({ providers: [DpopProofUseStore], exports: [DpopProofUseStore] })
export class DpopStoreModule {}
