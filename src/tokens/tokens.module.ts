import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KeysModule } from '../keys/keys.module.js';
import { MacKeyCipher } from './mac-key-cipher.js';
import { RefreshRepeats } from './refresh-repeats.js';
import { Token } from './token.entity.js';
import { TokensService } from './tokens.service.js';
import { TokenStoreModule } from './token-store.module.js';
import { CommonModule } from '../common/common.module.js';
import { AuditModule } from '../audit/audit.module.js';

@Module({
  imports: [CommonModule, AuditModule, TypeOrmModule.forFeature([Token]), KeysModule, TokenStoreModule],
  providers: [TokensService, MacKeyCipher, RefreshRepeats],
  exports: [TokensService, RefreshRepeats, TokenStoreModule],
})
export class TokensModule {}
