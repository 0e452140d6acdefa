import { Injectable } from '@nestjs/common';
import { validate as isUuid } from 'uuid';
import { ClientStore } from '../../clients/client.store.js';
import { DomainError } from '../../common/domain-error.js';
import type { SessionClient } from '../../sessions/session-client.entity.js';
import type { LiveSessionFilter, LiveSessionPosition } from '../../sessions/session-search.store.js';
import { SessionsService } from '../../sessions/sessions.service.js';
import { AccountAdministration } from './account-administration.service.js';
import type { PeopleAdministrator } from './people-administrator.js';
import { PeopleDirectory } from './people-directory.service.js';
import { liveSessionItem } from './person-views.js';

export type LiveSessionItem = ReturnType<typeof liveSessionItem>;

/**
 * Every person's live sessions, as the admin API lists them (issue 48: the help desk's "end a
 * stolen laptop's sessions", found by device, address or application), and one ended by the
 * public id the list gives, without knowing whose it is: through AccountAdministration.endSession,
 * as the person's own route does, so AdministratorProtection decides and session.ended is audited.
 */
@Injectable()
export class SessionDirectory {
  constructor(
    private readonly sessions: SessionsService,
    private readonly clients: ClientStore,
    private readonly people: PeopleDirectory,
    private readonly administration: AccountAdministration,
  ) {}

  /** Up to `limit` live sessions matching `filter`, newest first, after `after`. */
  async list(filter: LiveSessionFilter, limit: number, after: LiveSessionPosition | null): Promise<LiveSessionItem[]> {
    const rows = await this.sessions.livePage(filter, limit, after);
    const names = await this.clientNames(rows.flatMap(({ clients }) => clients));
    return rows.map((row) => liveSessionItem(row, names));
  }

  /** The names of the clients these records name, by id (a client deleted meanwhile has none). */
  async clientNames(records: readonly SessionClient[]): Promise<Map<string, string>> {
    const ids = [...new Set(records.map((record) => record.clientId))];
    return new Map((await this.clients.findByIds(ids)).map((client) => [client.id, client.name]));
  }

  /** Ends the live session with this public id, whoever's it is; session_not_found, with nothing changed, when none has it. */
  async end(by: PeopleAdministrator, publicId: string): Promise<void> {
    const owner = isUuid(publicId) ? await this.sessions.ownerOfLive(publicId) : undefined;
    if (owner === undefined) throw new DomainError('session_not_found', `No live session ${JSON.stringify(publicId.slice(0, 64))}`);
    await this.administration.endSession(by, await this.people.require(owner), publicId);
  }
}
