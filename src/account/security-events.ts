import { Injectable } from '@nestjs/common';
import type { AuditEvent } from '../audit/audit-event.entity.js';
import { AuditService } from '../audit/audit.service.js';
import { ClientStore } from '../clients/client.store.js';
import { clientIdOf, securityEventLine, type SecurityEventLine } from './security-event-wording.js';

/** How many events the account page shows. */
export const SECURITY_EVENTS_SHOWN = 20;

/**
 * The person's recent security events (issue 48), newest first: every event about them (subject
 * `user:<id>`: sign-ins, failed ones and those from a new device, factor, passkey, password,
 * profile and session changes, whoever made them), and the access they gave or withdrew themselves
 * (consents are about the client). Each is one range of an audit index (audit-event.entity.ts), so the page reads two.
 */
@Injectable()
export class SecurityEvents {
  constructor(
    private readonly audit: AuditService,
    private readonly clients: ClientStore,
  ) {}

  async recent(userId: string): Promise<SecurityEventLine[]> {
    // A few more than shown: some events repeat another and are left out (security-event-wording.ts).
    const limit = SECURITY_EVENTS_SHOWN * 2;
    const [about, consents] = await Promise.all([this.audit.list(limit, { person: userId }), this.audit.list(limit, { actor: `user:${userId}`, event: { prefix: 'consent.' } })]);
    const events = newestFirst([...about, ...consents]);
    const names = await this.clientNames(events.filter((event) => event.action.startsWith('consent.')).map(clientIdOf));
    return events
      .map((event) => securityEventLine(event, userId, (id) => names.get(id) ?? 'an application that no longer exists'))
      .filter((line): line is SecurityEventLine => line !== null)
      .slice(0, SECURITY_EVENTS_SHOWN);
  }

  private async clientNames(ids: string[]): Promise<Map<string, string>> {
    const unique = [...new Set(ids.filter((id) => id !== ''))];
    return new Map(unique.length === 0 ? [] : (await this.clients.findByIds(unique)).map((client) => [client.id, client.name]));
  }
}

/** Both lists merged, newest first (UUIDv7 ids order events within a millisecond), each event once. */
function newestFirst(events: AuditEvent[]): AuditEvent[] {
  const byId = new Map(events.map((event) => [event.id, event]));
  return [...byId.values()].sort((a, b) => b.at.getTime() - a.at.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}
