/**
 * State shared through the database, on three instances, each step addressed to the instance the
 * test chose (its own port, as the balancer passes requests on: support/target.ts), in both
 * topologies; in haproxy-pgbouncer every statement goes through PgBouncer in transaction mode and
 * only the LISTEN connections reach PostgreSQL directly (DATABASE_LISTEN_URL), so the per-instance
 * caches are on. A revocation, a rotated secret, a refresh rotation, an item's version, an
 * Idempotency-Key, a device's approval and an exchanged token's chain are seen by every instance,
 * and doctor names the pooler's mode. Run by scripts/test-cluster.mjs; this file never stops
 * PostgreSQL.
 *
 * Where an instance keeps a row (docs/operations/scaling-limits.md), the test first proves that it does: a
 * change written with the triggers off (no notification) is not seen by any instance. Then the same
 * change made as the server or the CLI makes it must be: at once on the instance that made it, and
 * on the others within the notification's delivery, which the test measures.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ExchangeTokenType, GrantType } from '../../src/common/oauth.constants.js';
import { hashSecret } from '../../src/common/secrets.js';
import { decideDevice } from '../helpers/device.js';
import { basicAuth } from '../helpers/oauth-flow.js';
import type { TestUser } from '../helpers/test-app.js';
import { Cluster, type ClusterClient, withClusterLogs } from './support/cluster.js';
import { obtainCode, SCOPE } from './support/flow.js';
import type { Instance } from './support/instance.js';
import { InstanceBrowser } from './support/instance-browser.js';
import { TOPOLOGY } from './support/settings.js';
import { requestJsonTo, requestTo, type TargetAnswer } from './support/target.js';

const REDIRECT_URI = 'https://app.example/callback';
const NOTES = '/api/v1/notes';
/** How long another instance may take to refuse what one revoked: the notification's delivery, with room for a busy CI machine. */
const DELIVERY_LIMIT_MS = 2000;

describe(`state shared through the database on three instances behind ${TOPOLOGY.label}, each step on a chosen instance`, () => {
  let cluster: Cluster;
  let web: ClusterClient;
  let service: ClusterClient;
  let aliceId: string;
  const alice: TestUser = { username: 'alice', password: 'correct horse battery staple' };

  const withLogs = withClusterLogs(() => cluster);
  const [one, two, three] = [0, 1, 2].map((i) => () => cluster.instances[i]);
  const all = () => cluster.instances;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  /** POST /token on `instance` as `client` (client_secret_basic). */
  const tokenOn = (instance: Instance, client: ClusterClient, form: Record<string, string>) => requestTo(cluster, instance, 'POST', '/token', { authorization: basicAuth(client.clientId, client.clientSecret) }, form);
  /** The status of a read of the data API on `instance` with `token`. */
  const readsOn = async (instance: Instance, token: string) => (await requestTo(cluster, instance, 'GET', `${NOTES}?limit=1`, bearer(token))).status;
  /** The status of a client_credentials request on `instance` with `secret`. */
  const authenticatesOn = async (instance: Instance, client: ClusterClient, secret: string) =>
    (await requestTo(cluster, instance, 'POST', '/token', { authorization: basicAuth(client.clientId, secret) }, { grant_type: 'client_credentials', scope: 'notes:read' })).status;
  const everywhere = (probe: (instance: Instance) => Promise<number>) => Promise.all(all().map(probe));

  /** Alice signs in and consents on `instance`, and `client` redeems the code there: the token response. */
  async function tokensFrom(instance: Instance, client: ClusterClient): Promise<Record<string, unknown>> {
    const { code, verifier } = await obtainCode(cluster.baseUrl, client, alice, new InstanceBrowser(cluster, instance));
    const answer = await tokenOn(instance, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier });
    expect(answer).toMatchObject({ status: 200, servedBy: instance.name });
    return answer.body;
  }

  /** Runs `sql` with the triggers off (session_replication_role = replica): no notification, so no instance hears of the change. */
  const silently = (sql: string) => cluster.query(`SET session_replication_role = replica; ${sql}`);

  /**
   * Polls `probe` until it answers `refusal`, for at most DELIVERY_LIMIT_MS from `since`: the ms
   * from `since` to the first answer that refused, and how many were still accepted before it; or
   * what it still answered at the limit.
   */
  async function refusedWithin(since: number, probe: () => Promise<number>, refusal = 401): Promise<{ ms: number; acceptedBefore: number } | string> {
    let accepted = 0;
    let last = 0;
    while (performance.now() - since < DELIVERY_LIMIT_MS) {
      last = await probe();
      if (last === refusal) return { ms: Math.round((performance.now() - since) * 10) / 10, acceptedBefore: accepted };
      accepted++;
    }
    return `still ${last} after ${DELIVERY_LIMIT_MS} ms`;
  }
  const refused = { ms: expect.any(Number), acceptedBefore: expect.any(Number) };

  beforeAll(async () => {
    cluster = await Cluster.start(3);
    aliceId = cluster.createUser(alice.username, alice.password);
    web = cluster.createClient('Web app', [GrantType.AuthorizationCode, GrantType.RefreshToken], SCOPE, REDIRECT_URI);
    service = cluster.createClient('Resource server', [GrantType.ClientCredentials], 'tokens:introspect notes:read');
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('revokes an access token kept by all three instances (RFC 7009) on instance 1: refused there by the next request, on 2 and 3 within the notification', withLogs(async () => {
    const token = String((await tokensFrom(one(), web)).access_token);
    // Used twice on each instance, so each keeps it.
    for (let n = 0; n < 2; n++) expect(await everywhere((i) => readsOn(i, token))).toEqual([200, 200, 200]);
    // Kept, not read: revoked in the database with no notification, it still works on every instance.
    await silently(`UPDATE tokens SET revoked_at = now() WHERE token_hash = '${hashSecret(token)}'`);
    expect(await everywhere((i) => readsOn(i, token))).toEqual([200, 200, 200]);
    await silently(`UPDATE tokens SET revoked_at = NULL WHERE token_hash = '${hashSecret(token)}'`);

    const revoked = await requestTo(cluster, one(), 'POST', '/revoke', { authorization: basicAuth(web.clientId, web.clientSecret) }, { token, token_type_hint: 'access_token' });
    const since = performance.now();
    expect(revoked.status).toBe(200);
    const onFirst = await readsOn(one(), token);
    const [second, third] = await Promise.all([two(), three()].map((i) => refusedWithin(since, () => readsOn(i, token))));
    console.log(`${TOPOLOGY.name}: access token revoked on instance-1, refused on instance-2 after ${JSON.stringify(second)}, on instance-3 after ${JSON.stringify(third)} (ms from the /revoke answer)`);
    expect({ onFirst, second, third }).toEqual({ onFirst: 401, second: refused, third: refused });
  }));

  it('rotates a secret with the CLI (clients:rotate-secret): the old one stops authenticating on every instance within the notification, the new one works on each', withLogs(async () => {
    const client = cluster.createClient('Rotated service', [GrantType.ClientCredentials], 'notes:read');
    for (let n = 0; n < 2; n++) expect(await everywhere((i) => authenticatesOn(i, client, client.clientSecret))).toEqual([200, 200, 200]);
    // Kept, not read: another secret hash written with no notification changes nothing anywhere.
    await silently(`UPDATE clients SET secret_hash = '${'0'.repeat(64)}' WHERE id = '${client.clientId}'`);
    expect(await everywhere((i) => authenticatesOn(i, client, client.clientSecret))).toEqual([200, 200, 200]);

    // The CLI is a process of its own: every instance learns of the rotation from its notification.
    const { client_secret: newSecret } = cluster.cli('clients:rotate-secret', '--client-id', client.clientId) as { client_secret: string };
    const since = performance.now();
    const delivery = await Promise.all(all().map((i) => refusedWithin(since, () => authenticatesOn(i, client, client.clientSecret))));
    console.log(`${TOPOLOGY.name}: secret rotated by the CLI, the old one refused after ${all().map((i, n) => `${JSON.stringify(delivery[n])} on ${i.name}`).join(', ')} (ms from the CLI's exit)`);
    expect(delivery).toEqual([refused, refused, refused]);
    expect(await everywhere((i) => authenticatesOn(i, client, newSecret))).toEqual([200, 200, 200]);
  }));

  it('refreshes on instance 2 a token issued on instance 1; the successor rotates on instance 3; the old token replayed there after that is reuse: invalid_grant, the family revoked everywhere', withLogs(async () => {
    const issued = await tokensFrom(one(), web);
    const form = { grant_type: 'refresh_token', refresh_token: String(issued.refresh_token) };
    const refreshed = await tokenOn(two(), web, form);
    expect(refreshed).toMatchObject({ status: 200, body: { refresh_token: expect.any(String) } });
    expect(refreshed.body.refresh_token).not.toBe(issued.refresh_token);
    // docs/reference/token.md, "Refresh, twice: one answer": while the successor is unused, the same request on another
    // instance within REFRESH_REUSE_GRACE_SECONDS gets the same answer (one chain, kept in the database).
    const repeated = await tokenOn(three(), web, form);
    expect(repeated).toMatchObject({ status: 200, body: { access_token: refreshed.body.access_token, refresh_token: refreshed.body.refresh_token } });

    // The successor works on instance 3.
    const successor = await tokenOn(three(), web, { grant_type: 'refresh_token', refresh_token: String(refreshed.body.refresh_token) });
    expect(successor).toMatchObject({ status: 200, body: { refresh_token: expect.any(String) } });
    const accessTokens = [String(refreshed.body.access_token), String(successor.body.access_token)];
    // Each instance keeps both access tokens.
    for (const token of accessTokens) expect(await everywhere((i) => readsOn(i, token))).toEqual([200, 200, 200]);

    // The successor was used, so the old token again is reuse, within the grace window too.
    const replayed = await tokenOn(three(), web, form);
    const since = performance.now();
    expect(replayed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // Revoked on instance 3, which wrote it, at once; on 1 and 2 within the notification.
    expect(await Promise.all(accessTokens.map((token) => readsOn(three(), token)))).toEqual([401, 401]);
    const delivery = await Promise.all([one(), two()].flatMap((i) => accessTokens.map((token) => refusedWithin(since, () => readsOn(i, token)))));
    console.log(`${TOPOLOGY.name}: refresh token reused on instance-3, the family's access tokens refused on instance-1 after ${JSON.stringify(delivery.slice(0, 2))}, on instance-2 after ${JSON.stringify(delivery.slice(2))} (ms from the invalid_grant)`);
    expect(delivery).toEqual([refused, refused, refused, refused]);
    // The newest refresh token is revoked with them.
    expect(await tokenOn(one(), web, { grant_type: 'refresh_token', refresh_token: String(successor.body.refresh_token) })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  }));

  it('creates an item on instance 1, reads its ETag on instance 2, updates it with If-Match on instance 3; the same stale If-Match on instance 1 gets 412', withLogs(async () => {
    const token = String((await tokensFrom(one(), web)).access_token);
    const created = await requestJsonTo(cluster, one(), 'POST', NOTES, bearer(token), { title: 'One version for all' });
    expect(created.status).toBe(201);
    const path = `${NOTES}/${String(created.body.id)}`;
    const read = await requestTo(cluster, two(), 'GET', path, bearer(token));
    expect(read).toMatchObject({ status: 200, body: { id: created.body.id, title: 'One version for all' } });
    const etag = read.headers.get('etag')!;
    expect(etag).toBe(created.headers.get('etag'));

    const updated = await requestJsonTo(cluster, three(), 'PUT', path, { ...bearer(token), 'if-match': etag }, { title: 'Changed on instance-3' });
    expect(updated).toMatchObject({ status: 200, body: { title: 'Changed on instance-3' } });
    expect(updated.headers.get('etag')).not.toBe(etag);
    const stale = await requestJsonTo(cluster, one(), 'PUT', path, { ...bearer(token), 'if-match': etag }, { title: 'A lost update' });
    expect(stale).toMatchObject({ status: 412, body: { error: 'precondition_failed' } });

    const after = await requestTo(cluster, two(), 'GET', path, bearer(token));
    expect(after).toMatchObject({ status: 200, body: { title: 'Changed on instance-3' } });
    expect(after.headers.get('etag')).toBe(updated.headers.get('etag'));
  }));

  it('answers the same keyed POST sent to instance 1 and then to instance 2 with the same answer, and writes exactly one item', withLogs(async () => {
    const token = String((await tokensFrom(one(), web)).access_token);
    const title = `keyed ${randomUUID()}`;
    const headers = { ...bearer(token), 'idempotency-key': `"${randomUUID()}"` };
    const first = await requestJsonTo(cluster, one(), 'POST', NOTES, headers, { title });
    expect(first.status).toBe(201);
    const retry = await requestJsonTo(cluster, two(), 'POST', NOTES, headers, { title });
    const answer = (reply: TargetAnswer) => ({ status: reply.status, body: reply.body, location: reply.headers.get('location'), etag: reply.headers.get('etag') });
    expect(answer(retry)).toEqual(answer(first));
    expect(await cluster.query("SELECT id FROM items WHERE data->>'title' = $1", [title])).toEqual([{ id: first.body.id }]);
    // The key is taken for this request on every instance: another body with it is refused on the third.
    const other = await requestJsonTo(cluster, three(), 'POST', NOTES, headers, { title: `${title}, another body` });
    expect(other).toMatchObject({ status: 422, body: { error: 'unprocessable_entity' } });
  }));

  it('asks for a device code on instance 1 (RFC 8628), approves at the verification URI on instance 2, polls the tokens on instance 3; a second poll gets invalid_grant', withLogs(async () => {
    const terminal = cluster.cli('clients:create', '--name', 'Terminal', '--public', '--scope', 'notes:read', '--grant-type', GrantType.DeviceCode, '--grant-type', GrantType.RefreshToken) as { client_id: string };
    const asked = await requestTo(cluster, one(), 'POST', '/device_authorization', {}, { client_id: terminal.client_id, scope: 'notes:read' });
    expect(asked).toMatchObject({ status: 200, body: { verification_uri: `${cluster.issuer}/device`, device_code: expect.any(String), user_code: expect.any(String) } });
    const poll = (instance: Instance) => requestTo(cluster, instance, 'POST', '/token', {}, { grant_type: GrantType.DeviceCode, device_code: String(asked.body.device_code), client_id: terminal.client_id });

    expect(await poll(three())).toMatchObject({ status: 400, body: { error: 'authorization_pending' } });
    // The interval is kept in the database: a poll on instance 1 right after the one on instance 3 is too fast.
    expect(await poll(one())).toMatchObject({ status: 400, body: { error: 'slow_down' } });
    const done = await decideDevice(new InstanceBrowser(cluster, two()), alice, String(asked.body.user_code));
    expect(done.status).toBe(200);
    expect(done.body).toContain('Go back to your device');

    const tokens = await poll(three());
    expect(tokens).toMatchObject({ status: 200, body: { access_token: expect.any(String), refresh_token: expect.any(String), scope: 'notes:read' } });
    const token = String(tokens.body.access_token);
    expect(await everywhere((i) => readsOn(i, token))).toEqual([200, 200, 200]);
    // docs/guides/devices.md: the device_code then works no more, on any instance, and the repeat revokes nothing.
    expect(await poll(one())).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await everywhere((i) => readsOn(i, token))).toEqual([200, 200, 200]);
  }));

  it('exchanges on instance 2 a person\'s token from instance 1 (RFC 8693); the exchanged token works on instance 3, and dies there with its subject token revoked on instance 1', withLogs(async () => {
    const gateway = cluster.createClient('Gateway', [GrantType.AuthorizationCode, GrantType.TokenExchange], SCOPE, REDIRECT_URI);
    const subject = String((await tokensFrom(one(), gateway)).access_token);
    const note = await requestJsonTo(cluster, one(), 'POST', NOTES, bearer(subject), { title: 'Alice\'s, read by the gateway' });
    expect(note.status).toBe(201);

    const exchanged = await tokenOn(two(), gateway, {
      grant_type: GrantType.TokenExchange,
      subject_token: subject,
      subject_token_type: ExchangeTokenType.AccessToken,
      resource: cluster.issuer,
      scope: 'notes:read',
    });
    expect(exchanged).toMatchObject({ status: 200, body: { issued_token_type: ExchangeTokenType.AccessToken, scope: 'notes:read' } });
    expect(exchanged.body.refresh_token).toBeUndefined();
    const token = String(exchanged.body.access_token);

    // On instance 3: Alice's item, with the narrowed scope, and the gateway named as the actor.
    expect(await requestTo(cluster, three(), 'GET', `${NOTES}/${String(note.body.id)}`, bearer(token))).toMatchObject({ status: 200, body: { id: note.body.id } });
    expect(await requestJsonTo(cluster, three(), 'POST', NOTES, bearer(token), { title: 'not with notes:read' })).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
    const introspected = await requestTo(cluster, three(), 'POST', '/introspect', { authorization: basicAuth(service.clientId, service.clientSecret) }, { token });
    expect(introspected).toMatchObject({ status: 200, body: { active: true, sub: aliceId, client_id: gateway.clientId, act: { sub: gateway.clientId } } });

    // docs/guides/token-exchange.md: revoking the subject token ends every token exchanged from it, on every instance.
    const revoked = await requestTo(cluster, one(), 'POST', '/revoke', { authorization: basicAuth(gateway.clientId, gateway.clientSecret) }, { token: subject, token_type_hint: 'access_token' });
    const since = performance.now();
    expect(revoked.status).toBe(200);
    const delivery = await refusedWithin(since, () => readsOn(three(), token));
    console.log(`${TOPOLOGY.name}: subject token revoked on instance-1, the token exchanged from it refused on instance-3 after ${JSON.stringify(delivery)} (ms from the /revoke answer)`);
    expect(delivery).toEqual(refused);
  }));

  const poolerFinding =
    TOPOLOGY.poolMode === 'transaction'
      ? 'DATABASE_URL is a pooler in transaction mode and change notifications arrive through DATABASE_LISTEN_URL; told DATABASE_POOL_MODE=session, its pooler check fails'
      : 'DATABASE_URL keeps a session per connection and change notifications arrive through it';
  it(`doctor names the pooler's mode: ${poolerFinding}`, withLogs(async () => {
    const doctor = (settings: Record<string, string> = {}) => {
      const { status, output } = cluster.cliWith(settings, 'doctor', '--json');
      const { checks } = output as { checks: { id: string; status: string; detail: string }[] };
      return { status, checks: Object.fromEntries(checks.map((check) => [check.id, check])) };
    };
    const report = doctor();
    const failed = Object.values(report.checks).filter((check) => check.status === 'fail');
    console.log(`${TOPOLOGY.name}: doctor exited ${report.status}; pooler: ${report.checks.pooler?.detail}; listen: ${report.checks.listen?.detail}${failed.length > 0 ? `; failed: ${JSON.stringify(failed)}` : ''}`);
    if (TOPOLOGY.poolMode === 'transaction') {
      expect(report.checks.pooler).toMatchObject({ status: 'ok', detail: expect.stringContaining('pooler in transaction mode, and DATABASE_POOL_MODE=transaction') });
      expect(report.checks.listen).toMatchObject({ status: 'ok', detail: expect.stringContaining('through DATABASE_LISTEN_URL') });
      // The operator's mistake: the same environment saying session. A LISTEN through PgBouncer never hears its own NOTIFY.
      const wrong = doctor({ DATABASE_POOL_MODE: 'session' });
      expect(wrong.status).toBe(1);
      expect(wrong.checks.pooler).toMatchObject({ status: 'fail', detail: expect.stringContaining('looks like a pooler in transaction mode') });
    } else {
      expect(report.checks.pooler).toMatchObject({ status: 'ok', detail: expect.stringContaining('keeps a session per connection') });
      expect(report.checks.listen).toMatchObject({ status: 'ok', detail: expect.stringContaining('through DATABASE_URL') });
    }
  }));
});
