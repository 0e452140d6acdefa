import { splitScope } from '../common/scope.js';
import { OPENID_SCOPE } from '../scopes/scope-catalog.js';

/** Whether a granted scope (space-separated) makes its grant an OpenID Connect one (Core §3.1.2.1). */
export function holdsOpenId(scope: string): boolean {
  return splitScope(scope).includes(OPENID_SCOPE);
}
