import { Injectable, type ExecutionContext, type Type } from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { isMacAuthorization, MacHeaderError, parseMacAuthorization, type MacCredentials } from '../common/mac-signature.js';
import { DPOP_SCHEME, Strategy, TokenType } from '../common/oauth.constants.js';
import { AccessDenied } from './access-denied.js';
import type { AccessRequirement, ScopeResolver } from './access-requirement.js';
import { AccessTokenAuthenticator } from './access-token.authenticator.js';
import { ACCESS_REQUIREMENT, type DeclaredRequirement } from './require-access.decorator.js';
import type { Principal } from './token-principal.js';

const MAX_NONCE_LENGTH = 128;

/** The DPoP scheme (case-insensitive, RFC 9110 §11.1) and its token68 (RFC 9449 §7.1); anything else after it fails to match [1]. */
const DPOP_AUTHORIZATION = /^dpop +(?:([A-Za-z0-9\-._~+/]+=*) *$)?/i;

type ProtectedRequest = FastifyRequest & { user?: Principal };

/**
 * The one guard of every protected route: reads the request's credentials (a bearer token through
 * passport-http-bearer, or a MAC-signed request), has AccessTokenAuthenticator decide whom they
 * speak for, then checks the route's declared requirement (@RequireScope, @RequireAccess). Every
 * refusal is an AccessDenied carrying its RFC 6750 error; ProtectedResourceExceptionFilter writes it.
 */
@Injectable()
export class AccessTokenGuard extends AuthGuard(Strategy.Bearer) {
  private readonly resolved = new Map<Type, unknown>();

  constructor(
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
    private readonly authenticator: AccessTokenAuthenticator,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const declared = this.reflector.getAllAndOverride<DeclaredRequirement | undefined>(ACCESS_REQUIREMENT, [context.getHandler(), context.getClass()]);
    if (!declared) throw new Error(`${context.getClass().name}.${context.getHandler().name} uses AccessTokenGuard without declaring a requirement (@RequireScope or @RequireAccess)`);
    const request = context.switchToHttp().getRequest<ProtectedRequest>();
    // RFC 9700 §2.5 / RFC 6750 §2.3: tokens in URLs leak through logs and Referer; only the header is accepted.
    if (request.query && typeof request.query === 'object' && 'access_token' in request.query) {
      throw new AccessDenied({ error: 'invalid_request', description: 'Send the access token in the Authorization header, not in the URL' });
    }
    const header = request.headers.authorization;
    const bodyToken = 'formBodyToken' in declared && declared.formBodyToken ? formBodyToken(request) : undefined;
    if (bodyToken !== undefined) {
      // RFC 6750 §2.2 (opted in by the route): one method only; the token then goes through the same authenticator.
      if (header !== undefined) throw new AccessDenied({ error: 'invalid_request', description: 'Send the access token once: in the Authorization header or in the body, not both' }, TokenType.Bearer);
      const result = await this.authenticator.authenticate({ scheme: TokenType.Bearer, token: bodyToken });
      if ('error' in result) throw new AccessDenied(result, TokenType.Bearer);
      request.user = result;
    } else if (header !== undefined && isMacAuthorization(header)) {
      request.user = await this.macPrincipal(request, header);
    } else if (header !== undefined && DPOP_AUTHORIZATION.test(header)) {
      request.user = await this.dpopPrincipal(request, header);
    } else {
      await super.canActivate(context);
    }
    await this.enforce(declared, request.user!, request);
    return true;
  }

  /** Called by passport: the principal, or why passport-http-bearer refused before any lookup. */
  override handleRequest<TUser = Principal>(err: unknown, principal: TUser | false, _info: unknown, _context?: ExecutionContext, status?: unknown): TUser {
    if (err) throw err;
    if (principal) return principal;
    // No bearer token at all (or another scheme): bare challenges (RFC 6750 §3.1); a malformed
    // header or a token in two places, passport's 400: invalid_request.
    if (status === 400) throw new AccessDenied({ error: 'invalid_request', description: 'Send exactly one access token, in the Authorization header' }, TokenType.Bearer);
    throw new AccessDenied({ error: 'missing' });
  }

  private async macPrincipal(request: FastifyRequest, header: string): Promise<Principal> {
    const result = await this.authenticator.authenticate({
      scheme: TokenType.Mac,
      credentials: macCredentials(header),
      // §3.2.1: the request-target as sent (request.url is the raw one); host and port as the client addressed us.
      request: { method: request.method, requestUri: request.url, host: request.hostname, port: request.port ?? (request.protocol === 'https' ? 443 : 80) },
    });
    if ('error' in result) throw new AccessDenied(result, TokenType.Mac);
    return result;
  }

  /** RFC 9449 §7.1: `Authorization: DPoP <token>` with the proof in the DPoP header. */
  private async dpopPrincipal(request: FastifyRequest, header: string): Promise<Principal> {
    const token = DPOP_AUTHORIZATION.exec(header)?.[1];
    if (token === undefined) throw new AccessDenied({ error: 'invalid_request', description: 'Send "Authorization: DPoP <token>" with exactly one token' }, DPOP_SCHEME);
    const result = await this.authenticator.authenticate({ scheme: DPOP_SCHEME, token, proof: request.raw.headersDistinct.dpop, request: { method: request.method, path: request.url } });
    if ('error' in result) throw new AccessDenied(result, DPOP_SCHEME);
    return result;
  }

  private async enforce(declared: DeclaredRequirement, principal: Principal, request: FastifyRequest): Promise<void> {
    if ('requirement' in declared) {
      await this.instance<AccessRequirement>(declared.requirement).check(principal, request, declared.argument);
      return;
    }
    if (principal.kind !== 'access_token') throw new AccessDenied({ error: 'invalid_token', description: 'This route takes an access token, not a registration access token' }, principal.scheme);
    // Client-credentials tokens (no user) own no items (RFC 6749 §4.4).
    if (declared.resourceOwner && principal.userId === null) {
      throw new AccessDenied({ error: 'invalid_token', description: 'This access token speaks for no user (a client\'s own token); this API needs one that does' }, principal.scheme);
    }
    const scope = typeof declared.scope === 'string' ? declared.scope : this.instance<ScopeResolver>(declared.scope).scopeFor(request);
    if (!principal.scopes.has(scope)) {
      throw new AccessDenied({ error: 'insufficient_scope', description: `This request needs the scope ${scope}`, scope }, principal.scheme);
    }
  }

  /** A requirement or resolver from the application's providers, looked up once. */
  private instance<T>(type: Type): T {
    let instance = this.resolved.get(type);
    if (instance === undefined) {
      instance = this.moduleRef.get(type, { strict: false });
      this.resolved.set(type, instance);
    }
    return instance as T;
  }
}

/** The MAC header's parameters; a malformed header is invalid_request (RFC 6750 §3.1) under the MAC scheme. */
function macCredentials(header: string): MacCredentials {
  try {
    const credentials = parseMacAuthorization(header);
    if (credentials.nonce.length > MAX_NONCE_LENGTH) throw new MacHeaderError(`The MAC nonce may be at most ${MAX_NONCE_LENGTH} characters`);
    return credentials;
  } catch (error) {
    if (error instanceof MacHeaderError) throw new AccessDenied({ error: 'invalid_request', description: error.message }, TokenType.Mac);
    throw error;
  }
}

/** RFC 6750 §2.2: a POST with an application/x-www-form-urlencoded body carrying access_token. */
function formBodyToken(request: FastifyRequest): string | undefined {
  if (request.method !== 'POST' || !/^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '')) return undefined;
  const token = (request.body as Record<string, unknown> | undefined)?.access_token;
  return typeof token === 'string' && token !== '' ? token : undefined;
}
