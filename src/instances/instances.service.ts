import { Injectable } from '@nestjs/common';
import { InstanceStore } from './instance.store.js';

/** An instance is live while its last heartbeat is at most this many of its intervals old: one late or lost beat is not a death. */
export const LIVE_WITHIN_HEARTBEATS = 3;
/** How far back the list goes (and how long the purge keeps an instance that stopped without saying so). */
export const SEEN_WITHIN_HOURS = 24;
/** The most the list holds, the latest started first: a day of crash-restarts must not make the dashboard unbounded. */
export const LISTED_AT_MOST = 200;

export interface InstanceSeen {
  id: string;
  hostname: string;
  pid: number;
  version: string;
  node: string;
  startedAt: Date;
  lastSeenAt: Date;
  live: boolean;
}

/** The instances seen (GET /admin/api/v1/instances, the console's dashboard): which run, and which stopped answering. */
@Injectable()
export class InstancesService {
  constructor(private readonly store: InstanceStore) {}

  /**
   * Those seen in the last SEEN_WITHIN_HOURS at `now`, the latest started first, each live or
   * not by its own heartbeat interval (instances of one deployment may differ during a change of
   * setting). An instance that stopped gracefully removed itself and is not listed.
   */
  async recent(now: Date): Promise<InstanceSeen[]> {
    const rows = await this.store.seenSince(new Date(now.getTime() - SEEN_WITHIN_HOURS * 3_600_000), LISTED_AT_MOST);
    return rows.map((row) => ({
      id: row.id,
      hostname: row.hostname,
      pid: row.pid,
      version: row.version,
      node: row.node,
      startedAt: row.startedAt,
      lastSeenAt: row.lastSeenAt,
      live: now.getTime() - row.lastSeenAt.getTime() <= LIVE_WITHIN_HEARTBEATS * row.heartbeatSeconds * 1000,
    }));
  }
}
