import { Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module.js';
import { SigningModule } from '../signing/signing.module.js';
import { IdTokenIssuer } from './id-token.issuer.js';

/** OpenID Connect on top of the OAuth flows: ID tokens (and, next, userinfo and logout). */
@Module({
  imports: [CommonModule, SigningModule],
  providers: [IdTokenIssuer],
  exports: [IdTokenIssuer, SigningModule],
})
export class OpenIdModule {}
