import { Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module.js';
import { KeysModule } from '../keys/keys.module.js';
import { DpopNonces } from './dpop-nonces.js';
import { DpopProofVerifier } from './dpop-proof.verifier.js';
import { ReplayModule } from '../replay/replay.module.js';

/** DPoP (RFC 9449): the proof check the token endpoint and every protected resource share, and the server's nonces. */
@Module({
  imports: [CommonModule, KeysModule, ReplayModule],
  providers: [DpopNonces, DpopProofVerifier],
  exports: [DpopNonces, DpopProofVerifier],
})
export class DpopModule {}
