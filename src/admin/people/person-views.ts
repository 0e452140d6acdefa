import type { GrantedAccess } from '../../consents/access-withdrawal.service.js';
import type { FactorSummary } from '../../factors/factor-records.service.js';
import type { SessionClient } from '../../sessions/session-client.entity.js';
import type { Session } from '../../sessions/session.entity.js';
import type { User } from '../../users/user.entity.js';
import type { UserView } from '../../users/users.service.js';
import type { AdminRole } from '../../scopes/admin-scopes.js';

/**
 * The admin API's answers about people (issue 48), in the wire's snake_case. None carries a secret
 * or a hash: factors are kinds, names and dates, a session its random public id.
 */

/** A person in the list. */
export function personListItem(user: User, roles: readonly AdminRole[]) {
  return { id: user.id, username: user.username, name: user.name, email: user.email, active: user.active, created_at: user.createdAt.toISOString(), roles };
}

/** One person: the profile users:show prints, their roles and a summary of their second factors. */
export function personDetail(view: UserView, roles: readonly AdminRole[], factors: FactorSummary) {
  const iso = (date: Date | null) => date?.toISOString() ?? null;
  return {
    ...view,
    roles,
    factors: {
      totp: { enabled: factors.totp !== null, created_at: iso(factors.totp?.createdAt ?? null), last_used_at: iso(factors.totp?.lastUsedAt ?? null) },
      recovery_codes: { remaining: factors.recoveryCodes.left, created_at: iso(factors.recoveryCodes.createdAt) },
      // blocked: a copy was detected (WebAuthn §6.1.1); it signs nobody in until removed.
      passkeys: factors.passkeys.map((p) => ({ id: p.id, name: p.name, created_at: p.createdAt.toISOString(), last_used_at: iso(p.lastUsedAt), synced: p.synced, blocked: p.clonedAt !== null })),
    },
  };
}

/**
 * A live session: where it was started from (the address, and the device as described from the
 * User-Agent, never the header; both null for a session older than that record) and the
 * applications the person signed in to through it (the clients recorded for back-channel logout).
 * Sessions keep no last activity.
 */
export function sessionView({ session, clients }: { session: Session; clients: SessionClient[] }, clientNames: ReadonlyMap<string, string>) {
  return {
    id: session.publicId,
    device: session.device,
    ip: session.ip,
    created_at: session.createdAt.toISOString(),
    expires_at: session.expiresAt.toISOString(),
    applications: clients.map((client) => ({ client_id: client.clientId, name: clientNames.get(client.clientId) ?? null, signed_in_at: client.createdAt.toISOString() })),
  };
}

/** A live session in the list of everyone's (GET /sessions): sessionView, and whose it is. */
export function liveSessionItem(row: { session: Session & { user: Pick<User, 'id' | 'username'> }; clients: SessionClient[] }, clientNames: ReadonlyMap<string, string>) {
  const { id, ...rest } = sessionView(row, clientNames);
  return { id, person: { id: row.session.user.id, username: row.session.user.username }, ...rest };
}

/** An application holding access to the person's data: what the account's access page lists. */
export function grantView(grant: GrantedAccess) {
  return { client_id: grant.clientId, client_name: grant.clientName, scope: grant.scope, granted_at: grant.grantedAt.toISOString(), last_active_at: grant.lastActiveAt?.toISOString() ?? null };
}
