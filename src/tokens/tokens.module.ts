import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KeysModule } from '../keys/keys.module.js';
import { MacKeyCipher } from './mac-key-cipher.js';
import { MacNonceStore } from './mac-nonce.store.js';
import { Token } from './token.entity.js';
import { TokensService } from './tokens.service.js';
import { TokenStore } from './token.store.js';
import { CommonModule } from '../common/common.module.js';
import { AuditModule } from '../audit/audit.module.js';

@Module({
  imports: [CommonModule, AuditModule, TypeOrmModule.forFeature([Token]), KeysModule],
  providers: [TokenStore, TokensService, MacKeyCipher, MacNonceStore],
  exports: [TokensService, MacNonceStore],
})
export class TokensModule {}
