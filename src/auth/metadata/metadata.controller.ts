import { Controller, Get, Header } from '@nestjs/common';
import { MetadataService, type AuthorizationServerMetadata } from './metadata.service.js';

/** RFC 8414 §3: GET /.well-known/oauth-authorization-server. */
@Controller('.well-known')
export class MetadataController {
  constructor(private readonly metadata: MetadataService) {}

  @Get('oauth-authorization-server')
  @Header('Cache-Control', 'public, max-age=300')
  get(): AuthorizationServerMetadata {
    return this.metadata.document;
  }
}
