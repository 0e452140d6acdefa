import { applyDecorators, SetMetadata, UseFilters, UseGuards } from '@nestjs/common';
import { AccessTokenGuard } from '../../access/access-token.guard.js';
import { ACCESS_REQUIREMENT, type DeclaredRequirement } from '../../access/require-access.decorator.js';
import { ScimClientRequirement } from './scim-client.requirement.js';
import { ScimExceptionFilter } from './scim-exception.filter.js';
import { ScimRateLimitGuard } from './scim-rate-limit.guard.js';

/**
 * A /scim/v2 route: the one AccessTokenGuard with the SCIM client requirement, then the per-client
 * rate limit, and errors (refusals included) in SCIM's shape. Like @RequireAccess, but with the
 * SCIM transport's filter instead of the data API's.
 */
export function ScimProtected(): ClassDecorator {
  const declared: DeclaredRequirement = { requirement: ScimClientRequirement };
  return applyDecorators(SetMetadata(ACCESS_REQUIREMENT, declared), UseGuards(AccessTokenGuard, ScimRateLimitGuard), UseFilters(ScimExceptionFilter));
}
