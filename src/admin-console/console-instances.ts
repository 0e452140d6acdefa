import type { InstanceItem } from '../admin/system/instance-item.js';
import type { ConsoleApi } from './console-api.js';

/** One instance as the dashboard's table shows it. */
export interface InstanceRow {
  id: string;
  hostname: string;
  pid: number;
  version: string;
  node: string;
  startedAt: string;
  lastSeenAt: string;
  /** "12 s ago", at the moment the page was made. */
  lastSeen: string;
  live: boolean;
  /** The instance that answered this page's API call (the one the health section is about). */
  answering: boolean;
}

export interface InstancesPanel {
  items: InstanceRow[];
  live: number;
}

/** The instances seen (GET /instances, every administrator's), or null when the API did not answer them. */
export async function instancesPanel(api: ConsoleApi, now: Date): Promise<InstancesPanel | null> {
  const answer = await api.answer('GET', '/instances');
  if (answer.status !== 200) return null;
  const body = answer.body as { items: InstanceItem[]; answered_by: string };
  const items = body.items.map((instance) => ({
    id: instance.id,
    hostname: instance.hostname,
    pid: instance.pid,
    version: instance.version,
    node: instance.node,
    startedAt: instance.started_at,
    lastSeenAt: instance.last_seen_at,
    lastSeen: ago(new Date(instance.last_seen_at), now),
    live: instance.live,
    answering: instance.id === body.answered_by,
  }));
  return { items, live: items.filter((instance) => instance.live).length };
}

/** How long before `now` an instant was, as a person says it: "12 s ago", "5 min ago", "3 h ago", "2 d ago"; "just now" for an instant ahead (another instance's clock). */
export function ago(then: Date, now: Date): string {
  const seconds = Math.floor((now.getTime() - then.getTime()) / 1000);
  if (Number.isNaN(seconds)) return '—';
  if (seconds < 1) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}
