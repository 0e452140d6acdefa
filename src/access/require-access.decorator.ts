import { applyDecorators, SetMetadata, UseFilters, UseGuards, type CanActivate, type Type } from '@nestjs/common';
import type { AccessRequirement, ScopeResolver } from './access-requirement.js';
import { AccessTokenGuard } from './access-token.guard.js';
import { ProtectedResourceExceptionFilter } from './protected-resource-exception.filter.js';

export const ACCESS_REQUIREMENT = 'latchkey:access-requirement';

/** What a protected route declares, read by AccessTokenGuard. */
export type DeclaredRequirement =
  | { scope: string | Type<ScopeResolver>; resourceOwner: boolean; formBodyToken?: boolean }
  | { requirement: Type<AccessRequirement>; argument?: unknown };

interface ScopeOptions {
  /** The token must speak for a person (RFC 6749 §1.1 resource owner), not be a client's own (§4.4). */
  resourceOwner?: boolean;
  /** Guards that run once the caller is known (a rate limit per token). */
  then?: Type<CanActivate>[];
  /**
   * Also take a bearer token from a form-encoded POST body (RFC 6750 §2.2), where a specification
   * asks for it (OpenID Connect Core §5.3.1, userinfo). Never in the URL (§2.3).
   */
  formBodyToken?: boolean;
}

/**
 * A protected route: an access token holding `scope`, or the scope a ScopeResolver works out from
 * the request, checked by the one AccessTokenGuard. Errors in RFC 6750's shape, with its challenges.
 */
export function RequireScope(scope: string | Type<ScopeResolver>, options: ScopeOptions = {}): ClassDecorator & MethodDecorator {
  return protectedRoute({ scope, resourceOwner: options.resourceOwner ?? false, formBodyToken: options.formBodyToken }, options.then ?? []);
}

/**
 * A protected route with a rule of its own (an AccessRequirement), checked by the same guard;
 * `argument` is handed to the rule (one rule, many routes: the admin API's permissions).
 */
export function RequireAccess(requirement: Type<AccessRequirement>, argument?: unknown): ClassDecorator & MethodDecorator {
  return protectedRoute({ requirement, argument }, []);
}

function protectedRoute(declared: DeclaredRequirement, then: Type<CanActivate>[]): ClassDecorator & MethodDecorator {
  return applyDecorators(SetMetadata(ACCESS_REQUIREMENT, declared), UseGuards(AccessTokenGuard, ...then), UseFilters(ProtectedResourceExceptionFilter));
}
