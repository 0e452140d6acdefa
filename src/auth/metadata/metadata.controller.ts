import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { openIdConfig, type OpenIdConfig } from '../../config/openid.config.js';
import { SigningKeyRing } from '../../signing/signing-key-ring.js';
import { MetadataService, type AuthorizationServerMetadata, type OpenIdProviderMetadata } from './metadata.service.js';

/** RFC 8414 §3, OpenID Connect Discovery 1.0 §4, and the JWKS (RFC 7517 §5) both name. */
@Controller('.well-known')
export class MetadataController {
  private readonly jwksCacheControl: string;

  constructor(
    private readonly metadata: MetadataService,
    private readonly keys: SigningKeyRing,
    @Inject(openIdConfig.KEY) config: OpenIdConfig,
  ) {
    // Shorter than the publish lead: a key published now is in every cache before it signs.
    this.jwksCacheControl = `public, max-age=${config.jwksMaxAgeSeconds}`;
  }

  @Get('oauth-authorization-server')
  @Header('Cache-Control', 'public, max-age=300')
  get(): AuthorizationServerMetadata {
    return this.metadata.document;
  }

  @Get('openid-configuration')
  @Header('Cache-Control', 'public, max-age=300')
  openIdConfiguration(): OpenIdProviderMetadata {
    return this.metadata.openIdDocument;
  }

  @Get('jwks.json')
  jwks(@Res({ passthrough: true }) reply: FastifyReply): string {
    reply.header('Cache-Control', this.jwksCacheControl).type('application/jwk-set+json');
    return this.keys.jwks();
  }
}
