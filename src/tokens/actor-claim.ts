/**
 * RFC 8693 §4.1: the act (actor) claim. `sub` is the party acting for the token's subject, here
 * the client_id of the client that exchanged the token; a nested `act` is the actor before it, so
 * a token passed along a chain of services names each of them, the current one outermost.
 */
export interface Actor {
  readonly sub: string;
  readonly act?: Actor;
}

/** The actor of a token exchanged by `clientId` from a token whose own actor was `previous` (none: no earlier actor). */
export function delegatedTo(clientId: string, previous: Actor | undefined): Actor {
  return previous === undefined ? { sub: clientId } : { sub: clientId, act: previous };
}

/** The act claim stored on a token row (JSON text), or undefined when it has none. */
export function parseActor(stored: string | null): Actor | undefined {
  return stored === null ? undefined : (JSON.parse(stored) as Actor);
}
