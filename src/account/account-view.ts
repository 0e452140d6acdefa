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
 * The person's live sessions, this browser's first and marked "This device", each named by the
 * device it was started on, with the address it came from, when it began and ends, and the
 * applications signed in through it. A session started before devices were recorded has neither
 * device nor address: it is named by when it began.
 */
export function sessionsView(sessions: { session: Session; clients: SessionClient[] }[], clientNames: ReadonlyMap<string, string>, hereRow: string | null) {
  const rows = sessions.map(({ session, clients }) => {
    const here = session.id === hereRow;
    const createdAt = when(session.createdAt);
    // This browser's heading says "This device", so its device goes with the address.
    const device = here ? session.device : null;
    const origin = session.ip === null ? device : device === null ? `From ${session.ip}` : `${device}, from ${session.ip}`;
    const facts = [origin, `Signed in ${createdAt}`, `Ends by itself at ${when(session.expiresAt)}`];
    return {
      id: session.publicId ?? '',
      here,
      heading: here ? 'This device' : (session.device ?? `Signed in ${createdAt}`),
      facts: facts.filter((fact) => fact !== null).join(' · '),
      endLabel: `End this session, signed in ${createdAt}${session.device === null ? '' : ` on ${session.device}`}`,
      applications: clients.map((client) => clientNames.get(client.clientId) ?? client.clientId),
    };
  });
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
