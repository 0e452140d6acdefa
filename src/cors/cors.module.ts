import { Module } from '@nestjs/common';
import { ClientsModule } from '../clients/clients.module.js';
import { AllowedOrigins } from './allowed-origins.js';

/**
 * Browser apps (issue 34): which origins may read Latchkey's answers. The Fastify hooks that answer
 * preflights and add the headers are cors.hook.ts, installed by app.setup.ts with the routes' rules.
 */
@Module({
  imports: [ClientsModule],
  providers: [AllowedOrigins],
  exports: [AllowedOrigins],
})
export class CorsModule {}
