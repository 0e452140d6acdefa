import { normalizeScope } from '../common/scope.js';
import type { Refusal } from './token-exchanges.js';

/** One source that limits an exchanged token's scope: its name (for the refusal) and what it allows. */
export interface ScopeBound {
  readonly name: string;
  readonly scope: readonly string[];
}

/**
 * The scope of an exchanged token, bound by every source that limits it (RFC 8693 §2.1 scope, §5:
 * the server decides what an exchange may issue; RFC 6749 §3.3): the subject token's scope (what
 * the person granted) and the exchanging client's registered scope (what an administrator lets
 * that service hold). Neither alone is enough: a service that may not hold notes:write must not get
 * it from a person's token either. Resource servers register no scopes, and a person has no bound
 * beyond the grant the subject token carries, so these two are all there is today. The request may
 * narrow within every bound; omitted, it gets what all of them allow. An empty result is refused,
 * never issued. `requested` is the parsed (normalized) scope parameter, undefined when not sent.
 */
export function exchangedScope(requested: readonly string[] | undefined, bounds: readonly ScopeBound[]): string[] | Refusal {
  if (requested !== undefined) {
    for (const bound of bounds) {
      const beyond = requested.filter((scope) => !bound.scope.includes(scope));
      if (beyond.length > 0) return { refused: `The requested scope exceeds ${bound.name}: ${beyond.join(' ')}` };
    }
  }
  const scope = requested ?? bounds.reduce<readonly string[]>((allowed, bound) => allowed.filter((s) => bound.scope.includes(s)), bounds[0]?.scope ?? []);
  if (scope.length === 0) return { refused: `No scope lies within ${bounds.map((bound) => bound.name).join(' and ')}` };
  return normalizeScope(scope);
}
