import { Controller, Get, Header, Inject, Req, Res } from '@nestjs/common';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { ApiError } from '../../http/api-error.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { openIdConfig, type OpenIdConfig } from '../../config/openid.config.js';
import { SigningKeyRing } from '../../signing/signing-key-ring.js';
import { MetadataService, type AuthorizationServerMetadata, type OpenIdProviderMetadata } from './metadata.service.js';

/** RFC 8414 §3, OpenID Connect Discovery 1.0 §4, and the JWKS (RFC 7517 §5) both name. */
@Controller('.well-known')
export class MetadataController {
  private readonly jwksCacheControl: string;
  /** The well-known path of an issuer with a path (RFC 8414 §3.1), or undefined for an issuer without one. */
  private readonly pathIssuerMetadata?: string;

  constructor(
    private readonly metadata: MetadataService,
    private readonly keys: SigningKeyRing,
    @Inject(openIdConfig.KEY) config: OpenIdConfig,
    @Inject(appConfig.KEY) app: AppConfig,
  ) {
    // Shorter than the publish lead: a key published now is in every cache before it signs.
    this.jwksCacheControl = `public, max-age=${config.jwksMaxAgeSeconds}`;
    const issuerPath = new URL(app.issuer).pathname.replace(/\/+$/, '');
    if (issuerPath !== '') this.pathIssuerMetadata = `/.well-known/oauth-authorization-server${issuerPath}`;
  }

  @Get('oauth-authorization-server')
  @Header('Cache-Control', 'public, max-age=300')
  get(): AuthorizationServerMetadata {
    return this.metadata.document;
  }

  /**
   * RFC 8414 §3.1: for an issuer with a path (https://host/tenant), the well-known segment goes
   * between the host and the path, /.well-known/oauth-authorization-server/tenant, which is where
   * clients such as oauth4webapi look. A proxy that passes that path on finds the document here.
   */
  @Get('oauth-authorization-server/*')
  @Header('Cache-Control', 'public, max-age=300')
  forIssuerPath(@Req() request: FastifyRequest): AuthorizationServerMetadata {
    const path = request.url.split('?')[0];
    if (this.pathIssuerMetadata === undefined || path !== this.pathIssuerMetadata) {
      throw new ApiError(404, `No authorization server metadata here; the issuer's is at ${this.pathIssuerMetadata ?? '/.well-known/oauth-authorization-server'}`);
    }
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
