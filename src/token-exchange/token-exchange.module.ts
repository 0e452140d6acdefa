import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ResourceServersModule } from '../resource-servers/resource-servers.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { TokenExchanges } from './token-exchanges.js';

/** Token exchange (RFC 8693): which tokens a client may exchange, and the record of each exchange. The grant lives with the others in auth/grants. */
@Module({
  imports: [AuditModule, ResourceServersModule, TokensModule],
  providers: [TokenExchanges],
  exports: [TokenExchanges],
})
export class TokenExchangeModule {}
