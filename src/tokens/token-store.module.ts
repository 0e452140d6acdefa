import { Module } from '@nestjs/common';
import { MacNonceStore } from './mac-nonce.store.js';
import { TokenStore } from './token.store.js';

/**
 * The tokens' tables alone, without TokensService and its MAC key cipher: what the purge needs,
 * so that the CLI's `purge` does not load the MAC token configuration and key.
 */
@Module({
  providers: [TokenStore, MacNonceStore],
  exports: [TokenStore, MacNonceStore],
})
export class TokenStoreModule {}
