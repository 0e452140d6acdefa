import type { GrantedAccess } from '../consents/access-withdrawal.service.js';
import type { FactorSummary } from '../factors/second-factors.service.js';
import type { ScopeCatalog } from '../scopes/scope-catalog.js';
import type { SessionClient } from '../sessions/session-client.entity.js';
import type { Session } from '../sessions/session.entity.js';
import type { SecurityEventLine } from './security-event-wording.js';

/** A time as the pages show it: to the minute, in UTC. */
export function when(date: Date): string {
  return date.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

/**
 * The person's live sessions, this browser's first and marked, each with the applications signed
 * in through it. Sessions keep no address or user agent (admin/people/person-views.ts): a session
 * is told by when it began; the security events say from which address each sign-in came.
 */
export function sessionsView(sessions: { session: Session; clients: SessionClient[] }[], clientNames: ReadonlyMap<string, string>, hereRow: string | null) {
  const rows = sessions.map(({ session, clients }) => ({
    id: session.publicId ?? '',
    here: session.id === hereRow,
    createdAt: when(session.createdAt),
    expiresAt: when(session.expiresAt),
    applications: clients.map((client) => clientNames.get(client.clientId) ?? client.clientId),
  }));
  return [...rows.filter((row) => row.here), ...rows.filter((row) => !row.here)];
}

export function grantsView(grants: GrantedAccess[], scopes: ScopeCatalog) {
  return grants.map((grant) => ({
    clientId: grant.clientId,
    clientName: grant.clientName,
    scopes: scopes.describeAll(grant.scope),
    grantedAt: when(grant.grantedAt),
    lastActiveAt: grant.lastActiveAt ? when(grant.lastActiveAt) : undefined,
  }));
}

/** One-time codes, recovery codes and passkeys: kinds, names and dates, never a secret. */
export function factorsView(summary: FactorSummary) {
  return {
    totp: summary.totp && { createdAt: when(summary.totp.createdAt), lastUsedAt: summary.totp.lastUsedAt && when(summary.totp.lastUsedAt) },
    recoveryCodesLeft: summary.recoveryCodes.left,
    passkeys: summary.passkeys.map((p) => ({ id: p.id, name: p.name, createdAt: when(p.createdAt), lastUsedAt: p.lastUsedAt ? when(p.lastUsedAt) : undefined, synced: p.synced, blockedSince: p.clonedAt ? when(p.clonedAt) : undefined })),
  };
}

export function eventsView(events: SecurityEventLine[]) {
  return events.map((event) => ({ at: when(event.at), iso: event.at.toISOString(), text: event.text, ip: event.ip, warning: event.warning }));
}
