/**
 * Many instances behind a load balancer (docker-compose.yml, without containers): three instances
 * on one PostgreSQL schema and one Redis, nginx round robin in front with TLS; or, in the
 * haproxy-pgbouncer topology, HAProxy in front (deploy/haproxy.cfg) and PgBouncer in transaction
 * mode (deploy/pgbouncer.ini) between the instances and a database of their own. Nothing lives in
 * an instance's memory, so any request may land anywhere, an instance may die, and the database may
 * go away and come back. Run by scripts/test-cluster.mjs (npm run test:cluster), after the main suite.
 */
import { Browser } from '../helpers/browser.js';
import { authorizeUrl, basicAuth, newPkce, redirectParams } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { Cluster, type ClusterClient, withClusterLogs } from './support/cluster.js';
import { obtainAccessToken, obtainCode, SCOPE } from './support/flow.js';
import { inParallel, postAsClient, send, withBearer, type Reply } from './support/http.js';
import { runLoad } from './support/load.js';
import { isPostgresUp, startPostgres, stopPostgres } from './support/postgres.js';
import { TOPOLOGY } from './support/settings.js';
import { requestTo } from './support/target.js';

const REDIRECT_URI = 'https://app.example/callback';
const WORKERS = 20;

describe(`three instances behind ${TOPOLOGY.label} on one PostgreSQL and one Redis`, () => {
  let cluster: Cluster;
  let web: ClusterClient;
  let service: ClusterClient;
  const user: TestUser = { username: 'alice', password: 'correct horse battery staple' };

  const withLogs = withClusterLogs(() => cluster);
  const instancesServing = (replies: { upstream: string | null }[]) => new Set(replies.map((r) => cluster.instanceOf(r.upstream)?.name ?? `unknown(${r.upstream})`));
  const serviceToken = () => postAsClient(cluster.baseUrl, service, '/token', { grant_type: 'client_credentials', scope: 'notes:read' });
  const introspect = (token: string) => postAsClient(cluster.baseUrl, service, '/introspect', { token });

  beforeAll(async () => {
    cluster = await Cluster.start(3);
    cluster.createUser(user.username, user.password);
    web = cluster.createClient('Web app', ['authorization_code', 'refresh_token'], SCOPE, REDIRECT_URI);
    service = cluster.createClient('Resource server', ['client_credentials'], 'tokens:introspect notes:read');
  }, 120_000);

  afterAll(async () => {
    // The rest of CI needs PostgreSQL, whatever happened here.
    await startPostgres();
    await cluster?.stop();
  });

  it('runs a whole flow whose authorize, login, consent, token, refresh and API calls land on different instances', withLogs(async () => {
    const browser = new Browser(cluster.baseUrl);
    const pkce = newPkce();
    const hops: { step: string; upstream: string | null }[] = [];
    const hop = <T extends { headers: Headers }>(step: string, page: T): T => (hops.push({ step, upstream: page.headers.get('x-upstream') }), page);

    const loginPage = hop('authorize', await browser.get(authorizeUrl(web, { scope: SCOPE, state: 'xyz', code_challenge: pkce.challenge, code_challenge_method: 'S256' })));
    expect(loginPage.body).toContain('action="/login"');
    const loggedIn = hop('login', await browser.submit(loginPage, '/login', { username: user.username, password: user.password }));
    expect(loggedIn.status).toBe(303);
    // The form came from one instance and was accepted by another: session cookie and CSRF token are
    // sealed with the shared SESSION_SECRET, not with anything an instance keeps to itself.
    expect(cluster.instanceOf(hops[1].upstream)).not.toBe(cluster.instanceOf(hops[0].upstream));
    const consentPage = hop('consent page', await browser.get(loggedIn.location!));
    expect(consentPage.body).toContain('action="/consent"');
    const allowed = hop('consent', await browser.submit(consentPage, '/consent', { decision: 'allow' }));
    const params = redirectParams(allowed);
    expect(params.get('state')).toBe('xyz');
    expect(params.get('iss')).toBe(cluster.issuer); // RFC 9207

    const token = await postAsClient(cluster.baseUrl, web, '/token', { grant_type: 'authorization_code', code: params.get('code')!, redirect_uri: REDIRECT_URI, code_verifier: pkce.verifier });
    hops.push({ step: 'token', upstream: token.upstream });
    expect(token).toMatchObject({ status: 200, body: { token_type: 'bearer', scope: SCOPE } });
    const refreshed = await postAsClient(cluster.baseUrl, web, '/token', { grant_type: 'refresh_token', refresh_token: String(token.body.refresh_token) });
    hops.push({ step: 'refresh', upstream: refreshed.upstream });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(token.body.refresh_token);

    const accessToken = String(refreshed.body.access_token);
    const created = await send(cluster.baseUrl, 'POST', '/api/v1/notes', withBearer(accessToken, { json: { title: `Written through ${TOPOLOGY.balancerName}` } }));
    hops.push({ step: 'create', upstream: created.upstream });
    expect(created.status).toBe(201);
    const read = await send(cluster.baseUrl, 'GET', `/api/v1/notes/${String(created.body.id)}`, withBearer(accessToken));
    hops.push({ step: 'read', upstream: read.upstream });
    expect(read).toMatchObject({ status: 200, body: { id: created.body.id, title: `Written through ${TOPOLOGY.balancerName}` } });

    expect(instancesServing(hops)).toEqual(new Set(cluster.instances.map((i) => i.name)));
    // Behind the proxy only: an instance's own port answers plain http on /health/* alone.
    const direct = await send(`http://${cluster.instances[0].address}`, 'POST', '/token', { form: { grant_type: 'client_credentials' } });
    expect(direct).toMatchObject({ status: 400, body: { error: 'https_required' } });
  }));

  it('lets exactly one of 100 concurrent redemptions of one code, spread over the instances, succeed', withLogs(async () => {
    const { code, verifier } = await obtainCode(cluster.baseUrl, web, user);
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier };
    const replies = await Promise.all(Array.from({ length: 100 }, () => postAsClient(cluster.baseUrl, web, '/token', form)));

    const tally: Record<string, number> = {};
    for (const key of replies.map((r) => (r.status === 200 ? '200' : `${r.status} ${String(r.body.error)}`))) tally[key] = (tally[key] ?? 0) + 1;
    expect(tally).toEqual({ '200': 1, '400 invalid_grant': 99 });
    expect(instancesServing(replies).size).toBe(3);
    // RFC 6749 §4.1.2: the replays revoked what the code issued, whichever instance issued it.
    const winner = replies.find((r) => r.status === 200)!;
    expect((await introspect(String(winner.body.access_token))).body).toEqual({ active: false });
  }));

  it('keeps serving when an instance is killed during a load run, and loses nothing it acknowledged', withLogs(async () => {
    const userToken = await obtainAccessToken(cluster.baseUrl, web, user);
    const victim = cluster.instances[1];
    const report = await runLoad({ baseUrl: cluster.baseUrl, service, userToken, workers: WORKERS, durationMs: 8000, at: { ms: 3000, action: () => victim.stop('SIGKILL') } });
    const { tokens, items, ...figures } = report;
    const pgbouncer = await cluster.poolerFigures();
    console.log(`Load run, ${WORKERS} workers for 8 s, ${victim.name} killed with SIGKILL at 3 s:\n${JSON.stringify({ ...figures, tokens: tokens.length, items: items.length, pgbouncer }, null, 2)}`);

    expect(victim.running).toBe(false);
    expect(report.upstreams[victim.address]).toBeGreaterThan(0);
    // The balancer itself never went away, and moved GETs and refused connections to the others.
    // Only a POST in flight on the victim may fail, at most one per worker; neither nginx nor HAProxy
    // resends it (no non_idempotent; disable-l7-retry). nginx answers it 502. HAProxy 2.6 answers
    // 502 only to the first request of a client connection; on a later one it closes the connection
    // without an answer, so that a client that knows the request is safe may send it again (RFC 9110
    // §9.2.2): fetch reports that as a socket closed by the other side, never a refused connection.
    const unanswered = TOPOLOGY.balancer === 'haproxy' ? ['create connection error', 'token connection error'] : [];
    if (TOPOLOGY.balancer === 'nginx') expect(report.connectionErrors).toBe(0);
    expect(Object.keys(report.connectionErrorCauses).filter((cause) => cause !== 'UND_ERR_SOCKET')).toEqual([]);
    expect(Object.keys(report.outcomes).sort().filter((k) => ![...['create 201', 'create 502', 'read 200', 'token 200', 'token 502'], ...unanswered].includes(k))).toEqual([]);
    expect(report.serverErrors + report.connectionErrors).toBeLessThanOrEqual(WORKERS);
    expect(report.succeeded).toBeGreaterThanOrEqual(report.requests - WORKERS);

    // Every token answered 200 is still active, every item answered 201 still there.
    const lostTokens = (await inParallel(tokens, 16, async (t) => ((await introspect(t)).body.active === true ? null : t))).filter(Boolean);
    const lostItems = (await inParallel(items, 16, async (id) => ((await send(cluster.baseUrl, 'GET', `/api/v1/notes/${id}`, withBearer(userToken))).status === 200 ? null : id))).filter(Boolean);
    expect({ lostTokens, lostItems }).toEqual({ lostTokens: [], lostItems: [] });

    // With one instance gone, a burst is served by the other two, every request a success.
    const burst: Reply[] = (await Promise.all(Array.from({ length: 30 }, async (_, i) => [
      await serviceToken(),
      await send(cluster.baseUrl, 'POST', '/api/v1/notes', withBearer(userToken, { json: { title: `after the kill ${i}` } })),
    ]))).flat();
    expect(burst.filter((r) => r.status !== 200 && r.status !== 201)).toEqual([]);
    expect(instancesServing(burst)).toEqual(new Set(cluster.instances.filter((i) => i !== victim).map((i) => i.name)));

    // Restarted, it rejoins: nginx tries it again after fail_timeout, HAProxy after two good
    // readiness checks, and it serves.
    await victim.start();
    await eventually(async () => cluster.instanceOf((await serviceToken()).upstream) === victim, 60_000);
  }));

  it('retries writes that carry an Idempotency-Key on another instance when one is killed mid-load: no 502, no duplicate item', withLogs(async () => {
    // deploy/nginx-locations.conf sends a data API write with a key to a location that lets nginx
    // resend it (non_idempotent); deploy/haproxy.cfg leaves l7 retries (empty-response, 503, …) on
    // for it alone among writes. A POST in flight on the killed instance goes to another, which
    // replays the first answer, or answers 409 while the dead instance's claim holds (the client
    // waits and sends it again). Every key must end as exactly one item, and the client must never
    // see a 502 for a keyed write. nginx names every instance it tried in X-Upstream, HAProxy only
    // the one that answered (and its retry count): onVictim counts, with HAProxy, the keyed writes
    // the victim answered before the kill, not those it dropped.
    const userToken = await obtainAccessToken(cluster.baseUrl, web, user);
    const victim = cluster.instances[2];
    const run = `keyed-${Date.now().toString(36)}`;
    const answered = new Map<string, string>();
    const statuses: Record<string, number> = {};
    let movedOn = 0;
    let onVictim = 0;
    const deadline = Date.now() + 8000;
    const worker = async (id: number) => {
      for (let n = 0; Date.now() < deadline; n++) {
        const key = `${run}-${id}-${n}`;
        for (let attempt = 0; attempt < 40; attempt++) {
          const reply = await send(cluster.baseUrl, 'POST', '/api/v1/notes', withBearer(userToken, { json: { title: key }, headers: { 'idempotency-key': `"${key}"` } }));
          statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
          if (reply.retries > 0) movedOn++;
          if (reply.upstream?.split(', ').includes(victim.address)) onVictim++;
          if (reply.status === 201) {
            answered.set(key, String(reply.body.id));
            break;
          }
          // 409: the key is held (the dead instance's claim, until IDEMPOTENCY_CLAIM_SECONDS); wait as Retry-After says.
          await new Promise((resolve) => setTimeout(resolve, reply.status === 409 ? 1000 : 200));
        }
      }
    };
    await Promise.all([
      new Promise<void>((resolve, reject) => setTimeout(() => victim.stop('SIGKILL').then(resolve, reject), 3000)),
      ...Array.from({ length: WORKERS }, (_, id) => worker(id)),
    ]);
    console.log(`Keyed writes, ${WORKERS} workers for 8 s, ${victim.name} killed with SIGKILL at 3 s: ${JSON.stringify({ keys: answered.size, statuses, movedOn, onVictim })}`);

    expect(victim.running).toBe(false);
    expect(onVictim).toBeGreaterThan(0);
    // Some keyed writes did go to another instance after the kill (refused, or dropped in flight), so
    // the answers below say something about resending.
    expect(movedOn).toBeGreaterThan(0);
    // The balancer resent every keyed write the victim dropped: the client saw 201 or 409, never a 502.
    expect(Object.keys(statuses).filter((status) => status !== '201' && status !== '409')).toEqual([]);
    // Exactly one item per key, and it is the one the answer named.
    const rows = await cluster.query<{ id: string; title: string }>("SELECT id, data->>'title' AS title FROM items WHERE data->>'title' LIKE $1", [`${run}-%`]);
    const byTitle = new Map<string, string[]>();
    for (const row of rows) byTitle.set(row.title, [...(byTitle.get(row.title) ?? []), row.id]);
    expect([...byTitle].filter(([, ids]) => ids.length > 1)).toEqual([]);
    expect(Object.fromEntries([...byTitle].map(([title, ids]) => [title, ids[0]]))).toEqual(Object.fromEntries(answered));

    await victim.start();
    await eventually(async () => cluster.instanceOf((await serviceToken()).upstream) === victim, 60_000);
  }));

  it('goes unready while PostgreSQL is down, and serves again once it is back, without restarting an instance', withLogs(async () => {
    const pids = cluster.instances.map((i) => i.pid);
    expect(await Promise.all(cluster.instances.map((i) => i.readiness()))).toEqual([200, 200, 200]);
    try {
      stopPostgres();
      expect(isPostgresUp()).toBe(false);
      await Promise.all(cluster.instances.map((i) => i.waitForReadiness(503, 45_000)));
      // Told to come back later (503 + Retry-After), not a 500 or a hung request: by the instance
      // itself (through PgBouncer, which cannot reach PostgreSQL either), and through the balancer
      // (HAProxy answers this itself once its checks took every instance out, in the same shape).
      const direct = await requestTo(cluster, cluster.instances[0], 'POST', '/token', { authorization: basicAuth(service.clientId, service.clientSecret) }, { grant_type: 'client_credentials', scope: 'notes:read' });
      expect({ status: direct.status, error: direct.body.error, retryAfter: direct.headers.get('retry-after') }).toEqual({ status: 503, error: 'temporarily_unavailable', retryAfter: expect.stringMatching(/^\d+$/) });
      const during = await serviceToken();
      expect(during).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' } });
    } finally {
      await startPostgres();
    }
    await Promise.all(cluster.instances.map((i) => i.waitForReadiness(200, 60_000)));
    await cluster.balancer.waitUntilServing(30_000);
    // The balancer takes each instance back after its own checks pass (`rise 2` at 1 s in
    // deploy/haproxy.cfg): an instance ready a moment ago may still be out. Every answer must be a
    // 200 meanwhile; within the checks' time, all three serve again.
    let after: Awaited<ReturnType<typeof serviceToken>>[] = [];
    await eventually(async () => {
      after = [];
      for (let i = 0; i < 6; i++) after.push(await serviceToken());
      expect(after.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      return instancesServing(after).size === 3;
    }, 30_000);
    expect(cluster.instances.map((i) => i.pid)).toEqual(pids);
  }));
});

async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Not true after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
