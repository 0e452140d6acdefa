import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { CollectionRegistry } from '../../collections/collection-registry.js';
import { appConfig, type AppConfig } from '../../config/app.config.js';
import { ScopeCatalog } from '../../scopes/scope-catalog.js';
import { buildOpenApiDocument } from './openapi-document.js';
import { adminPaths, adminScopeDescriptions } from '../../admin/openapi/admin-openapi.js';

export const API_DOCS_PATH = '/api/docs';

/**
 * Serves the OpenAPI document at /api/docs/json and Swagger UI at /api/docs. The UI loads its own
 * scripts and styles from this server, so those pages get a CSP that allows 'self' instead of the
 * API's default-src 'none'.
 */
export function setUpApiDocs(app: NestFastifyApplication): void {
  const { issuer } = app.get<AppConfig>(appConfig.KEY);
  const catalog = app.get(ScopeCatalog);
  const scopes = Object.fromEntries(catalog.all().filter((scope) => catalog.isDataScope(scope)).map((scope) => [scope, catalog.describe(scope).description]));
  const document = buildOpenApiDocument(issuer, app.get(CollectionRegistry).list(), { ...scopes, ...adminScopeDescriptions() });
  // Issue 48: the admin API is described in the same document, each path with its own server.
  Object.assign(document.paths, adminPaths(issuer));
  SwaggerModule.setup(API_DOCS_PATH.slice(1), app, document, {
    jsonDocumentUrl: `${API_DOCS_PATH.slice(1)}/json`,
    raw: ['json'],
    customSiteTitle: 'Latchkey data API',
  });
  app.getHttpAdapter().getInstance().addHook('onSend', async (request, reply, payload) => {
    if (request.url === API_DOCS_PATH || request.url.startsWith(`${API_DOCS_PATH}/`)) {
      reply.header('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
    }
    return payload;
  });
}
