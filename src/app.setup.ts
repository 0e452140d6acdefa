import { DpopNonces } from './dpop/dpop-nonces.js';
import { offerDpopNonces } from './dpop/dpop-nonce.hook.js';
import { AllowedOrigins } from './cors/allowed-origins.js';
import { answerCors } from './cors/cors.hook.js';
import secureSession from '@fastify/secure-session';
import { NestFactory } from '@nestjs/core';
import { Logger, PinoLogger } from 'nestjs-pino';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { VersioningType, type DynamicModule } from '@nestjs/common';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hkdfSync } from 'node:crypto';
import { AppModule } from './app.module.js';
import { OAuthExceptionFilter } from './auth/errors/oauth-exception.filter.js';
import { OAUTH_TRANSPORT } from './auth/token/oauth-form-endpoint.decorator.js';
import { httpErrorCode } from './http/http-error-code.js';
import { JsonExceptionFilter } from './http/json-exception.filter.js';
import { sendJsonError } from './http/json-error.js';
import { isCookieForm } from './http/cookie-forms.js';
import { loadCollections } from './collections/collections-loader.js';
import { apiConfig } from './config/api.config.js';
import { adminConsoleConfig } from './config/admin-console.config.js';
import { corsConfig } from './config/cors.config.js';
import { appConfig, type AppConfig } from './config/app.config.js';
import { databaseConfig, readDatabaseConfig } from './config/database.config.js';
import { housekeepingConfig } from './config/housekeeping.config.js';
import { macTokenConfig } from './config/mac-token.config.js';
import { openIdConfig } from './config/openid.config.js';
import { logoutConfig } from './config/logout.config.js';
import { outboundConfig } from './config/outbound.config.js';
import { legacyGrantsConfig } from './config/legacy-grants.config.js';
import { metricsConfig } from './config/metrics.config.js';
import { factorsConfig } from './config/factors.config.js';
import { assertSafeForProduction } from './config/production-guards.js';
import { clientErrorHandler } from './http/client-error-handler.js';
import { enforceTransportSecurity } from './http/transport-security.js';
import { LoggingModule, type LoggingOptions } from './logging/logging.module.js';
import { logRequests } from './logging/request-logging.js';
import { echoRequestId, requestId } from './logging/request-id.js';
import { oauthConfig } from './config/oauth.config.js';
import { rateLimitConfig } from './config/rate-limit.config.js';
import { redisConfig } from './config/redis.config.js';
import { sessionConfig, type SessionConfig } from './config/session.config.js';
import { passkeyConfig } from './config/passkey.config.js';
import { setUpApiDocs } from './resources/openapi/api-docs.js';
import { ResourceRoutes } from './resources/resource-routes.js';
import { API_VERSION } from './resources/items/resource-links.js';
import { ServerKeysService } from './keys/server-keys.service.js';

export type CreateAppOptions = LoggingOptions;

/** Creates the configured application; main.ts and the e2e tests both start Latchkey through here. */
export async function createApp(options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  // Every config namespace, and the collections file, is checked before anything connects: a wrong
  // value stops start-up here with its message, leaving no database connection open behind it.
  for (const validate of [adminConsoleConfig, corsConfig, databaseConfig, housekeepingConfig, legacyGrantsConfig, logoutConfig, outboundConfig, macTokenConfig, metricsConfig, oauthConfig, openIdConfig, rateLimitConfig, redisConfig, sessionConfig, passkeyConfig]) validate();
  loadCollections(apiConfig().collectionsFile);
  const app = appConfig();
  assertSafeForProduction({ app, database: readDatabaseConfig(), session: sessionConfig(), macToken: macTokenConfig(), openId: openIdConfig(), factors: factorsConfig() });
  const adapter = new FastifyAdapter({
    // No Express-style middleware is used (request logging is a Fastify hook), so no @fastify/middie.
    skipMiddie: true,
    bodyLimit: app.bodyLimitBytes,
    // Only the named load balancers may tell us the client's address and scheme (X-Forwarded-For,
    // X-Forwarded-Proto); anyone else's X-Forwarded-* headers are ignored.
    trustProxy: app.trustProxy.length > 0 ? app.trustProxy : false,
    ...(app.tls ? { https: app.tls } : {}),
    genReqId: requestId,
    // Requests Node's HTTP parser refuses (raw bytes in the request line, oversized headers) too.
    clientErrorHandler,
    // Errors Fastify raises before routing (a path that is not valid UTF-8, say) get our JSON shape too.
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      sendJsonError(reply, { status: error.statusCode ?? 400, error: httpErrorCode(error.statusCode ?? 400), description: error.message });
    },
  });
  const root: DynamicModule = { module: AppModule, imports: [LoggingModule.forRoot(options)] };
  const nest = await NestFactory.create<NestFastifyApplication>(root, adapter, {
    // Start-up messages wait for the pino logger, so every line is JSON (nestjs-pino).
    bufferLogs: true,
    // A start-up failure (bad collections file, database down) rejects here, so main.ts can print
    // one clear message and exit 1, and tests can assert it, instead of Nest exiting the process.
    abortOnError: false,
  });
  nest.useLogger(nest.get(Logger));
  await configureApp(nest);
  return nest;
}

export async function configureApp(app: NestFastifyApplication): Promise<void> {
  const config = app.get<AppConfig>(appConfig.KEY);
  const session = app.get<SessionConfig>(sessionConfig.KEY);
  const https = config.issuer.startsWith('https:');

  // First of all hooks: the request id, then a plain-http request in production goes no further.
  echoRequestId(app.getHttpAdapter().getInstance());
  logRequests(app.getHttpAdapter().getInstance(), app.get(PinoLogger).logger);
  enforceTransportSecurity(app.getHttpAdapter().getInstance(), config);
  offerDpopNonces(app.getHttpAdapter().getInstance(), app.get(DpopNonces));
  const routes = app.get(ResourceRoutes);
  // Browser apps: preflights answered before any guard, and which page may read an answer.
  answerCors(app.getHttpAdapter().getInstance(), app.get(AllowedOrigins), { prefix: `/api/v${API_VERSION}/`, methodsOf: (path) => routes.allowedMethods(path) });
  // The fallback for errors no route's own filter caught; those Fastify raises before a route runs
  // go to the filter of the transport that route declares (the OAuth endpoints').
  app.useGlobalFilters(new JsonExceptionFilter({ allowedMethodsOf: (path) => routes.allowedMethods(path), transports: { [OAUTH_TRANSPORT]: app.get(OAuthExceptionFilter) } }));
  // The REST API lives at /api/v1/…: URI versioning with the prefix "api/v", so a v2 can live beside it.
  app.enableVersioning({ type: VersioningType.URI, prefix: 'api/v' });
  app.useSecurityHeaders({
    // JSON responses need nothing; pages send their own, stricter policy (interaction-responder.ts).
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'self'"] } },
    xFrameOptions: { action: 'deny' },
    // RFC 9700 §4.2.4: no Referer header may carry a code or token to a third party.
    referrerPolicy: { policy: 'no-referrer' },
    // HSTS is sent only on responses that travelled over https (RFC 6797 §7.2): transport-security.ts.
    strictTransportSecurity: false,
  });
  // Fetch-metadata cross-origin checks on the cookie-authenticated forms, on top of their CSRF tokens
  // (RFC 9700 §4.7): every route that declares @CookieForm, a list no one keeps by hand.
  // Decided by the route the router matched, not the raw path: the router serves /%6Cogin as /login.
  app.enableCsrfProtection({ exclude: (request: FastifyRequest) => !isCookieForm(request) });

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
