/**
 * A PostgreSQL failover under load: two Latchkey instances on a Patroni cluster of two nodes
 * (synchronous replication, etcd), through HAProxy to the leader (deploy/haproxy-postgres.cfg).
 * First the leader's PostgreSQL crashes (Patroni restarts it, or fails over); then, once a leader
 * is steady again, the leader's whole host is lost (Patroni and PostgreSQL killed at once) and the
 * other node takes over when the leader key expires. Clients may be told to come back later (503),
 * never see a 500, and nothing they were told was written is lost. Run by
 * scripts/test-failover.mjs (npm run test:failover).
 */
import { hashSecret } from '../../src/common/secrets.js';
import { basicAuth } from '../helpers/oauth-flow.js';
import { waitUntil } from './support/daemon.js';
import { Deployment } from './support/deployment.js';
import { FailoverLoad, sendAsProxied } from './support/load.js';
import type { PatroniNode } from './support/patroni.js';
import { phaseFigures, summaryTable, type Phase } from './support/phases.js';

const WORKERS = 8;
const BACKOFF_MS = 100;
/** Quiet load before the first fault, and after each recovery. */
const STEADY_MS = 3000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Latchkey on PostgreSQL with failover: Patroni, synchronous replication, HAProxy to the leader', () => {
  let deployment: Deployment;
  let load: FailoverLoad;
  let pids: (number | undefined)[];
  const phases: Phase[] = [];

  /** On failure, the error carries the tail of every log. */
  const withLogs = (body: () => Promise<void>) => async () => {
    try {
      await body();
    } catch (error) {
      if (error instanceof Error && deployment) error.message += `\n\nLogs (${process.env.CLUSTER_DIR}):\n${deployment.logs()}`;
      throw error;
    }
  };

  /** Waits until every instance's /health/ready is 200 again. */
  const instancesReady = () => Promise.all(deployment.instances.map((i) => i.waitForReadiness(200, 30_000)));

  beforeAll(async () => {
    deployment = await Deployment.start();
  }, 120_000);

  afterAll(async () => {
    await load?.stop();
    await deployment?.stop();
  }, 60_000);

  it('serves through a crash of the leader\'s PostgreSQL, then through the loss of the leader\'s host', withLogs(async () => {
    const user = { username: 'alice', password: 'correct horse battery staple' };
    deployment.cli('users:create', '--username', user.username, '--password', user.password);
    const service = deployment.cli('clients:create', '--name', 'Service', '--grant-type', 'client_credentials', '--scope', 'notes:read') as { client_id: string; client_secret: string };
    // A person's token with a write scope, without a browser: the password grant, for this client only.
    const app = deployment.cli('clients:create', '--name', 'Writer', '--grant-type', 'password', '--scope', 'notes:read notes:write') as { client_id: string; client_secret: string };
    const issued = await sendAsProxied(deployment.instances[0], deployment.env.ISSUER, 'POST', '/token', {
      form: { grant_type: 'password', username: user.username, password: user.password, scope: 'notes:read notes:write' },
      headers: { authorization: basicAuth(app.client_id, app.client_secret) },
    });
    expect(issued.status).toBe(200);

    pids = deployment.instances.map((i) => i.pid);
    load = new FailoverLoad({
      instances: deployment.instances,
      issuer: deployment.env.ISSUER,
      service: { clientId: service.client_id, clientSecret: service.client_secret },
      userToken: String(issued.body.access_token),
      workers: WORKERS,
      backoffMs: BACKOFF_MS,
    });
    const baseline: Phase = { name: 'before', start: Date.now(), end: 0 };
    load.start();
    await sleep(STEADY_MS);

    // Phase 1: the leader's PostgreSQL crashes; its Patroni notices within loop_wait and restarts
    // it (or the standby takes over). Over when a leader has its synchronous standby again.
    const crash: Phase = { name: '1: leader postmaster SIGKILL', start: Date.now(), end: 0 };
    baseline.end = crash.start;
    const first = await deployment.waitForSteadyLeader(deployment.nodes, 10_000);
    crash.faultAt = Date.now();
    const killed = first.killPostmaster();
    // Until Patroni notices (within loop_wait), etcd still shows the old, steady state. Whether the
    // node leads again or follows the new leader, Patroni starts a new postmaster on it.
    await waitUntil(() => ![undefined, killed].includes(first.postmasterPid()), 30_000, `a new postmaster on ${first.name}`);
    const afterCrash = await deployment.waitForSteadyLeader(deployment.nodes, 60_000);
    await instancesReady();
    await sleep(STEADY_MS);

    // Phase 2: the leader's host is lost. Nobody releases the leader key; the standby promotes
    // itself once it expires (ttl), and HAProxy's check finds the new leader.
    const lost: Phase = { name: `2: leader host lost (${afterCrash.name})`, start: Date.now(), end: 0 };
    crash.end = lost.start;
    crash.name += ` (${first.name}; leader after: ${afterCrash.name})`;
    const survivor: PatroniNode = deployment.nodes.find((n) => n !== afterCrash)!;
    lost.faultAt = Date.now();
    afterCrash.killHost();
    await deployment.waitForSteadyLeader([survivor], 60_000);
    await instancesReady();
    await sleep(STEADY_MS);
    lost.end = Date.now();
    await load.stop();
    phases.push(baseline, crash, lost);

    const figures = phases.map((p) => phaseFigures(p, load.answers, load.probes));
    console.log(`Failover under load, ${WORKERS} workers (token + note per loop, ${BACKOFF_MS} ms pause after a failure), ${load.tokens.length} tokens and ${load.items.length} items acknowledged:\n${summaryTable(figures)}`);
  }), 150_000);

  // With the logs on failure: a 500's stack trace is in the instance's log.
  it('answered every request with its success or 503 temporarily_unavailable: no 500, no other 5xx, none left without an answer', withLogs(async () => {
    const outcomes: Record<string, number> = {};
    for (const key of load.answers.map((a) => `${a.op} ${a.status} ${a.error ?? ''}`.trim())) outcomes[key] = (outcomes[key] ?? 0) + 1;
    const unexpected = Object.keys(outcomes).filter((k) => !['token 200', 'create 201', 'token 503 temporarily_unavailable', 'create 503 temporarily_unavailable'].includes(k));
    expect(Object.fromEntries(unexpected.map((k) => [k, outcomes[k]]))).toEqual({});
    // The faults were felt: the test caused an outage, not nothing.
    expect(load.answers.some((a) => a.status === 503)).toBe(true);
  }));

  it('lost no token or item it acknowledged: all of them are in the database after both failovers', async () => {
    expect(load.tokens.length).toBeGreaterThan(0);
    const hashes = load.tokens.map(hashSecret);
    const tokens = await deployment.query<{ token_hash: string }>('SELECT token_hash FROM tokens WHERE token_hash = ANY($1) AND revoked_at IS NULL', [hashes]);
    const found = new Set(tokens.map((r) => r.token_hash));
    const items = await deployment.query<{ id: string }>('SELECT id FROM items WHERE id = ANY($1)', [load.items]);
    const foundItems = new Set(items.map((r) => String(r.id)));
    expect({ lostTokens: hashes.filter((h) => !found.has(h)).length, lostItems: load.items.filter((id) => !foundItems.has(id)) }).toEqual({ lostTokens: 0, lostItems: [] });
  });

  it('went unready (503) during the loss of the leader\'s host, and is ready and serving again without a restart', withLogs(async () => {
    const lost = phaseFigures(phases[2], load.answers, load.probes);
    expect(Object.keys(lost.unready).sort()).toEqual(deployment.instances.map((i) => i.name).sort());

    expect(deployment.instances.map((i) => i.pid)).toEqual(pids);
    expect(deployment.instances.every((i) => i.running)).toBe(true);
    await instancesReady();
    const after = new FailoverLoad({ ...load.setup, workers: 2 });
    after.start();
    await sleep(1000);
    await after.stop();
    const statuses = new Set(after.answers.map((a) => `${a.instance} ${a.op} ${a.status}`));
    expect([...statuses].sort()).toEqual(['instance-1 create 201', 'instance-1 token 200', 'instance-2 create 201', 'instance-2 token 200']);
  }));
});
