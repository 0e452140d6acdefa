/**
 * A load run through the load balancer: workers that each, in a loop, get a token (client_credentials), write a
 * note with a person's token and read it back. Records every outcome, and every token and item the
 * cluster acknowledged, so the test can check afterwards that none of them was lost.
 */
import type { ClusterClient } from './cluster.js';
import { postAsClient, send, withBearer, type Reply } from './http.js';

export interface LoadOptions {
  baseUrl: string;
  service: ClusterClient;
  userToken: string;
  workers: number;
  durationMs: number;
  /** Run once, this long after the start (while the workers keep going). */
  at?: { ms: number; action: () => Promise<void> };
}

export interface LoadReport {
  requests: number;
  /** Outcomes by operation and status, e.g. { 'token 200': 812, 'create 502': 3, 'read connection error': 0 }. */
  outcomes: Record<string, number>;
  succeeded: number;
  serverErrors: number;
  connectionErrors: number;
  /** Connection errors by fetch's cause (UND_ERR_SOCKET: closed without an answer; ECONNREFUSED: nothing listening). */
  connectionErrorCauses: Record<string, number>;
  /** Access tokens answered with 200. */
  tokens: string[];
  /** Ids of items answered with 201. */
  items: string[];
  /** Requests per upstream address as the balancer reported it (with nginx, two addresses: it moved on to another instance). */
  upstreams: Record<string, number>;
}

export async function runLoad(options: LoadOptions): Promise<LoadReport> {
  const report: LoadReport = { requests: 0, outcomes: {}, succeeded: 0, serverErrors: 0, connectionErrors: 0, connectionErrorCauses: {}, tokens: [], items: [], upstreams: {} };
  const record = (operation: string, reply: Reply): Reply => {
    report.requests++;
    const key = `${operation} ${reply.status === 0 ? 'connection error' : reply.status}`;
    report.outcomes[key] = (report.outcomes[key] ?? 0) + 1;
    if (reply.status >= 200 && reply.status < 300) report.succeeded++;
    else if (reply.status >= 500) report.serverErrors++;
    else if (reply.status === 0) {
      report.connectionErrors++;
      report.connectionErrorCauses[reply.error ?? 'unknown'] = (report.connectionErrorCauses[reply.error ?? 'unknown'] ?? 0) + 1;
    }
    if (reply.upstream) report.upstreams[reply.upstream] = (report.upstreams[reply.upstream] ?? 0) + 1;
    return reply;
  };
  const deadline = Date.now() + options.durationMs;

  const worker = async (id: number) => {
    for (let n = 0; Date.now() < deadline; n++) {
      const token = record('token', await postAsClient(options.baseUrl, options.service, '/token', { grant_type: 'client_credentials', scope: 'notes:read' }));
      if (token.status === 200) report.tokens.push(String(token.body.access_token));
      const created = record('create', await send(options.baseUrl, 'POST', '/api/v1/notes', withBearer(options.userToken, { json: { title: `load ${id}.${n}` } })));
      if (created.status !== 201) continue;
      const itemId = String(created.body.id);
      report.items.push(itemId);
      record('read', await send(options.baseUrl, 'GET', `/api/v1/notes/${itemId}`, withBearer(options.userToken)));
    }
  };

  const event = options.at
    ? new Promise<void>((resolve, reject) => setTimeout(() => options.at!.action().then(resolve, reject), options.at!.ms))
    : Promise.resolve();
  await Promise.all([event, ...Array.from({ length: options.workers }, (_, id) => worker(id))]);
  return report;
}
