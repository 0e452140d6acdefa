import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { ClientsModule } from '../clients/clients.module.js';
import { CommonModule } from '../common/common.module.js';
import { DpopModule } from '../dpop/dpop.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { AccessTokenAuthenticator } from './access-token.authenticator.js';
import { AccessTokenGuard } from './access-token.guard.js';
import { BearerStrategy } from './bearer.strategy.js';
import { MacProof } from './mac-proof.js';
import { ProtectedResourceExceptionFilter } from './protected-resource-exception.filter.js';

/**
 * Protected resources: the one access-token authenticator and guard behind @RequireScope and
 * @RequireAccess, for every module whose routes a token opens.
 */
@Module({
  imports: [CommonModule, PassportModule, TokensModule, ClientsModule, DpopModule],
  providers: [AccessTokenAuthenticator, AccessTokenGuard, BearerStrategy, MacProof, ProtectedResourceExceptionFilter],
  exports: [AccessTokenAuthenticator, AccessTokenGuard, ProtectedResourceExceptionFilter],
})
export class AccessModule {}
