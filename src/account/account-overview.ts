import { Injectable } from '@nestjs/common';
import { ClientStore } from '../clients/client.store.js';
import { AccessWithdrawalService, type GrantedAccess } from '../consents/access-withdrawal.service.js';
import { SecondFactors, type FactorSummary } from '../factors/second-factors.service.js';
import { SignInMethods } from '../identity-providers/sign-in-methods.js';
import { UpstreamAccounts } from '../identity-providers/upstream-accounts.service.js';
import { UpstreamOrigins } from '../identity-providers/upstream-origins.js';
import type { SessionClient } from '../sessions/session-client.entity.js';
import type { Session } from '../sessions/session.entity.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { User } from '../users/user.entity.js';
import type { SecurityEventLine } from './security-event-wording.js';
import { SecurityEvents } from './security-events.js';

/** At most this many sessions are listed: a person has a few; the rest are ended by "sign out everywhere else". */
const SESSIONS_SHOWN = 50;

/** Everything the account page shows about a person, read at once. */
export interface Overview {
  factors: FactorSummary;
  sessions: { session: Session; clients: SessionClient[] }[];
  clientNames: ReadonlyMap<string, string>;
  grants: GrantedAccess[];
  events: SecurityEventLine[];
  upstream: { id: string; name: string; linked: boolean }[];
  /** Where signing out or linking may go on to (the upstream providers): CSP form-action covers those redirects. */
  formTargets: string[];
}

/** Reads the account page's sections (issue 48) through the services that own each: sessions, factors, consents, the audit log, upstream links. */
@Injectable()
export class AccountOverview {
  constructor(
    private readonly factors: SecondFactors,
    private readonly sessions: SessionsService,
    private readonly clients: ClientStore,
    private readonly access: AccessWithdrawalService,
    private readonly events: SecurityEvents,
    private readonly signInMethods: SignInMethods,
    private readonly upstreamAccounts: UpstreamAccounts,
    private readonly upstreamOrigins: UpstreamOrigins,
  ) {}

  async of(user: User): Promise<Overview> {
    const [factors, sessions, grants, events, upstream] = await Promise.all([this.factors.summary(user.id), this.sessions.livePageOf(user.id, SESSIONS_SHOWN, null), this.access.list(user.id), this.events.recent(user.id), this.upstreamChoices(user.id)]);
    const clientIds = [...new Set(sessions.flatMap(({ clients }) => clients.map((client) => client.clientId)))];
    const [clients, formTargets] = await Promise.all([clientIds.length === 0 ? [] : this.clients.findByIds(clientIds), upstream.length > 0 ? this.upstreamOrigins.of() : []]);
    return { factors, sessions, clientNames: new Map(clients.map((client) => [client.id, client.name])), grants, events, upstream, formTargets };
  }

  /** An application's name by its id (the notice after a withdrawal), or undefined. */
  async applicationName(clientId: string): Promise<string | undefined> {
    return (await this.clients.findByIds([clientId]))[0]?.name;
  }

  /** Issue 45: the enabled upstream identity providers, each linked to this person or not. */
  private async upstreamChoices(userId: string): Promise<Overview['upstream']> {
    const [{ upstream }, links] = await Promise.all([this.signInMethods.forClient(undefined), this.upstreamAccounts.linksOf(userId)]);
    return upstream.map((provider) => ({ id: provider.id, name: provider.displayName, linked: links.some((link) => link.idp === provider.id) }));
  }
}
