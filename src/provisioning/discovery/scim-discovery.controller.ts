import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { scimConfig, type ScimConfig } from '../../config/scim.config.js';
import { ScimError } from '../http/scim-error.js';
import { ScimProtected } from '../http/scim-protected.decorator.js';
import { sendScim } from '../http/scim-reply.js';
import { listResponse } from '../resources/list-query.js';
import { ALL_SCHEMAS, RESOURCE_TYPES, resourceTypeDocument, schemaDocument, serviceProviderConfig } from './discovery.documents.js';

/** RFC 7644 §4: /ServiceProviderConfig, /ResourceTypes and /Schemas, behind the same token as the resources. */
@Controller('scim/v2')
@ScimProtected()
export class ScimDiscoveryController {
  private readonly baseUrl: string;

  constructor(@Inject(appConfig.KEY) app: AppConfig, @Inject(scimConfig.KEY) private readonly config: ScimConfig) {
    this.baseUrl = `${app.issuer.replace(/\/$/, '')}/scim/v2`;
  }

  @Get('ServiceProviderConfig')
  serviceProviderConfig(@Res() reply: FastifyReply): void {
    sendScim(reply, serviceProviderConfig(this.baseUrl, this.config.maxResults));
  }

  @Get('ResourceTypes')
  resourceTypes(@Res() reply: FastifyReply): void {
    const documents = RESOURCE_TYPES.map((type) => resourceTypeDocument(type, this.baseUrl));
    sendScim(reply, listResponse(documents.length, 1, documents));
  }

  @Get('ResourceTypes/:name')
  resourceType(@Param('name') name: string, @Res() reply: FastifyReply): void {
    const type = RESOURCE_TYPES.find((candidate) => candidate.name === name) ?? notFound(`No resource type "${name}"`);
    sendScim(reply, resourceTypeDocument(type, this.baseUrl));
  }

  @Get('Schemas')
  schemas(@Res() reply: FastifyReply): void {
    const documents = ALL_SCHEMAS.map((schema) => schemaDocument(schema, this.baseUrl));
    sendScim(reply, listResponse(documents.length, 1, documents));
  }

  @Get('Schemas/:id')
  schema(@Param('id') id: string, @Res() reply: FastifyReply): void {
    const schema = ALL_SCHEMAS.find((candidate) => candidate.id === id) ?? notFound(`No schema "${id}"`);
    sendScim(reply, schemaDocument(schema, this.baseUrl));
  }
}

function notFound(detail: string): never {
  throw ScimError.notFound(detail);
}
