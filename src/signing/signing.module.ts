import { Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module.js';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { KeysModule } from '../keys/keys.module.js';
import { SigningKey } from './signing-key.entity.js';
import { SigningKeyRing } from './signing-key-ring.js';
import { SigningKeyStore } from './signing-key.store.js';
import { SigningKeyVault } from './signing-key-vault.js';

/** The keys that sign ID tokens (and later logout tokens and JWT access tokens), and the JWKS that publishes them. */
@Module({
  imports: [TypeOrmModule.forFeature([SigningKey]), CommonModule, KeysModule, AuditModule],
  providers: [SigningKeyStore, SigningKeyVault, SigningKeyRing],
  exports: [SigningKeyRing, SigningKeyVault],
})
export class SigningModule {}
