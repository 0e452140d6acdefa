import secureSession from '@fastify/secure-session';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { VersioningType, type LoggerService, type LogLevel } from '@nestjs/common';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hkdfSync } from 'node:crypto';
import { AppModule } from './app.module.js';
import { httpErrorCode } from './auth/errors/http-error-code.js';
import { JsonExceptionFilter } from './auth/errors/json-exception.filter.js';
import { loadCollections } from './collections/collections-loader.js';
import { apiConfig } from './config/api.config.js';
import { appConfig, type AppConfig } from './config/app.config.js';
import { databaseConfig } from './config/database.config.js';
import { oauthConfig } from './config/oauth.config.js';
import { sessionConfig, type SessionConfig } from './config/session.config.js';
import { setUpApiDocs } from './resources/openapi/api-docs.js';
import { ResourceRoutes } from './resources/resource-routes.js';
import { ServerKeysService } from './keys/server-keys.service.js';

/** Routes that a browser submits with the session cookie: the only ones that need CSRF protection. */
const COOKIE_FORM_ROUTES = new Set(['/login', '/logout', '/consent', '/account/access/withdraw']);

/** LOG_LEVEL → the Nest log levels printed. */
const LOG_LEVELS: Record<string, LogLevel[] | false> = {
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
  info: ['fatal', 'error', 'warn', 'log'],
  warn: ['fatal', 'error', 'warn'],
  error: ['fatal', 'error'],
  fatal: ['fatal'],
  silent: false,
};

export interface CreateAppOptions {
  logger?: LoggerService | LogLevel[] | false;
}

/** Creates the configured application; main.ts and the e2e tests both start Latchkey through here. */
export async function createApp(options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  // Every config namespace, and the collections file, is checked before anything connects: a wrong
  // value stops start-up here with its message, leaving no database connection open behind it.
  for (const validate of [databaseConfig, oauthConfig, sessionConfig]) validate();
  loadCollections(apiConfig().collectionsFile);
  const app = appConfig();
  const adapter = new FastifyAdapter({
    bodyLimit: app.bodyLimitBytes,
    trustProxy: false,
    // Errors Fastify raises before routing (a path that is not valid UTF-8, say) get our JSON shape too.
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      void reply
        .code(error.statusCode ?? 400)
        .header('Content-Type', 'application/json;charset=UTF-8')
        .header('Cache-Control', 'no-store')
        .send(JSON.stringify({ error: httpErrorCode(error.statusCode ?? 400), error_description: error.message }));
    },
  });
  const nest = await NestFactory.create<NestFastifyApplication>(AppModule, adapter, {
    logger: options.logger ?? LOG_LEVELS[app.logLevel],
    // A start-up failure (bad collections file, database down) rejects here, so main.ts can print
    // one clear message and exit 1, and tests can assert it, instead of Nest exiting the process.
    abortOnError: false,
  });
  await configureApp(nest);
  return nest;
}

export async function configureApp(app: NestFastifyApplication): Promise<void> {
  const config = app.get<AppConfig>(appConfig.KEY);
  const session = app.get<SessionConfig>(sessionConfig.KEY);
  const https = config.issuer.startsWith('https:');

  const routes = app.get(ResourceRoutes);
  app.useGlobalFilters(new JsonExceptionFilter((path) => routes.allowedMethods(path)));
  // The REST API lives at /api/v1/…: URI versioning with the prefix "api/v", so a v2 can live beside it.
  app.enableVersioning({ type: VersioningType.URI, prefix: 'api/v' });
  app.useSecurityHeaders({
    // JSON responses need nothing; pages send their own, stricter policy (interaction-responder.ts).
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'self'"] } },
    xFrameOptions: { action: 'deny' },
    // RFC 9700 §4.2.4: no Referer header may carry a code or token to a third party.
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: https,
  });
  // Fetch-metadata cross-origin checks on the cookie-authenticated forms, on top of their CSRF tokens.
  app.enableCsrfProtection({ exclude: (request: FastifyRequest['raw']) => !COOKIE_FORM_ROUTES.has((request.url ?? '').split('?')[0]) });

  await app.register(secureSession, {
    key: await sessionKeys(app, session),
    cookieName: session.cookieName,
    expiry: session.ttlSeconds,
    cookie: { path: '/', httpOnly: true, sameSite: 'lax', secure: https, maxAge: session.ttlSeconds },
  });

  // Bodies of any other media type reach the route as raw bytes, so each endpoint answers an
  // unsupported type with its own error shape instead of Fastify's generic 415.
  // application/json too (replacing Nest's parser): jsonObjectBody decodes it strictly, RFC 8259 §8.1.
  app.useBodyParser('application/json', { bodyLimit: config.bodyLimitBytes }, (_request, body, done) => done(null, body));
  app.getHttpAdapter().getInstance().addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: config.bodyLimitBytes }, (_request, body, done) => done(null, body));
  setUpApiDocs(app);
  app.enableShutdownHooks();
}

/**
 * 32-byte keys for the session cookie, newest first: derived from SESSION_SECRET when configured,
 * otherwise generated once and shared by every instance through the database.
 */
async function sessionKeys(app: NestFastifyApplication, config: SessionConfig): Promise<Buffer[]> {
  if (config.secrets.length > 0) {
    return config.secrets.map((secret) => Buffer.from(hkdfSync('sha256', secret, 'latchkey', 'session-cookie-key', 32)));
  }
  return [await app.get(ServerKeysService).getOrCreate('session-cookie-key')];
}
