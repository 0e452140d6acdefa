import { applyDecorators, Header, HttpCode, Post, UseFilters, UseGuards } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ERROR_TRANSPORT } from '../../http/json-exception.filter.js';
import { ClientRateLimitGuard } from '../../rate-limit/client-rate-limit.guard.js';
import { ClientAuthenticationGuard } from '../client-auth/client-authentication.guard.js';
import { OAuthExceptionFilter } from '../errors/oauth-exception.filter.js';
import { FormContentTypeGuard } from './form-content-type.guard.js';

/** The error transport these endpoints declare to the application's fallback filter. */
export const OAUTH_TRANSPORT = 'oauth';

/**
 * A client-authenticated POST endpoint of the authorization server (/token, /introspect, /revoke,
 * /par): a form body, 200 on success (`status` 201 for /par, RFC 9126 §2.2), never cached (RFC 6749
 * §5.1, RFC 7662 §2.2, RFC 7009 §2.2). `json` adds the JSON content type for endpoints that answer
 * with a body. Its errors are RFC 6749 §5.2 JSON (OAuthExceptionFilter), also those Fastify raises
 * before the route runs.
 */
export function OAuthFormEndpoint(options: { json: boolean; status?: 200 | 201 }): MethodDecorator {
  return applyDecorators(
    Post(),
    HttpCode(options.status ?? 200),
    UseFilters(OAuthExceptionFilter),
    RouteConfig({ [ERROR_TRANSPORT]: OAUTH_TRANSPORT }),
    // The rate limit counts per authenticated client, so it runs after client authentication.
    UseGuards(FormContentTypeGuard, ClientAuthenticationGuard, ClientRateLimitGuard),
    ...(options.json ? [Header('Content-Type', 'application/json;charset=UTF-8')] : []),
    Header('Cache-Control', 'no-store'),
    Header('Pragma', 'no-cache'),
  );
}
