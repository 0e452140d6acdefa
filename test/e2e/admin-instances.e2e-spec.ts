/**
 * Issue 48, "the instances seen" on the dashboard: every server instance records itself in the
 * instances table at start-up and every INSTANCE_HEARTBEAT_SECONDS, and removes itself when it
 * stops gracefully; GET /admin/api/v1/instances lists those seen in the last day, each live or not.
 * Instances of one database: this file's app in-process, and `node dist/src/main.js` in processes
 * of their own (stopped with SIGTERM, or killed). The CLI is not an instance.
 */
import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AdminRolesService } from '../../src/admin/admin-roles.service.js';
import type { InstanceItem } from '../../src/admin/system/instance-item.js';
import { CliModule } from '../../src/cli/cli.module.js';
import { InstanceHeartbeat } from '../../src/housekeeping/instance-heartbeat.js';
import { PurgeService } from '../../src/housekeeping/purge.service.js';
import { InstanceStore } from '../../src/instances/instance.store.js';
import { ThisInstance } from '../../src/instances/this-instance.js';
import { AdminApi, type AdminResponse } from '../helpers/admin-api.js';
import { freePort } from '../helpers/app-at-issuer.js';
import { PROJECT, runCli } from '../helpers/cli.js';
import { TestApp } from '../helpers/test-app.js';
import { within } from '../helpers/within.js';

const VERSION = (JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')) as { version: string }).version;

/** An instance in a process of its own, on this file's database, beating every second; resolves once it listens. */
async function startInstance(): Promise<ChildProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: PROJECT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', METRICS_ENABLED: 'false', PURGE_INTERVAL_SECONDS: '0', INSTANCE_HEARTBEAT_SECONDS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const listening = await within(15_000, async () => output.includes('Latchkey is listening') || child.exitCode !== null);
  if (!listening || child.exitCode !== null) {
    child.kill('SIGKILL');
    throw new Error(`An instance did not start:\n${output}`);
  }
  return child;
}

/** Stops a child with `signal` and waits for it to exit. */
async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
}

describe('GET /admin/api/v1/instances', () => {
  let app: TestApp;
  let admin: AdminApi;
  let token: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    // The other instances run the built server.
    await promisify(execFile)('npm', ['run', '-s', 'build'], { cwd: PROJECT });
    app = await TestApp.start({ INSTANCE_HEARTBEAT_SECONDS: '1', PURGE_INTERVAL_SECONDS: '0' });
    admin = await AdminApi.setUp(app);
    token = (await admin.signIn(['helpdesk'])).token;
  }, 180_000);
  afterAll(async () => {
    await Promise.all(children.map((child) => stop(child, 'SIGKILL')));
    await app?.stop();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  const list = async (): Promise<{ response: AdminResponse; items: InstanceItem[] }> => {
    const response = await admin.request('GET', '/instances', token);
    return { response, items: (response.body.items ?? []) as InstanceItem[] };
  };
  const find = async (pid: number): Promise<InstanceItem | undefined> => (await list()).items.find((item) => item.pid === pid);
  const rowIds = async (): Promise<string[]> => ((await app.dataSource.query('SELECT "id" FROM "instances"')) as { id: string }[]).map((row) => row.id).sort();

  it('lists every running instance as live, each with its own id, host, pid and versions, and their heartbeats move on', async () => {
    const child = await startInstance();
    children.push(child);
    const own = app.app.get(ThisInstance);
    expect(await within(5000, async () => (await find(child.pid!))?.live === true)).toBe(true);

    const { response, items } = await list();
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.body.answered_by).toBe(own.id);
    const mine = items.find((item) => item.id === own.id)!;
    const other = items.find((item) => item.pid === child.pid)!;
    expect(mine).toMatchObject({ hostname: hostname(), pid: process.pid, version: VERSION, node: process.versions.node, live: true });
    expect(other).toMatchObject({ hostname: hostname(), version: VERSION, node: process.versions.node, live: true });
    expect(other.id).not.toBe(mine.id);
    expect(Object.keys(other).sort()).toEqual(['hostname', 'id', 'last_seen_at', 'live', 'node', 'pid', 'started_at', 'version']);
    expect(Date.parse(other.started_at)).toBeLessThanOrEqual(Date.parse(other.last_seen_at));
    // The latest started first.
    expect(items.indexOf(other)).toBeLessThan(items.indexOf(mine));

    // Every second, one more heartbeat.
    expect(await within(5000, async () => Date.parse((await find(child.pid!))?.last_seen_at ?? '') > Date.parse(other.last_seen_at))).toBe(true);
  });

  it('forgets an instance that stops gracefully (SIGTERM), and shows one that was killed as not live', async () => {
    const graceful = await startInstance();
    const killed = await startInstance();
    children.push(graceful, killed);
    expect(await within(5000, async () => (await find(graceful.pid!))?.live === true && (await find(killed.pid!))?.live === true)).toBe(true);

    await stop(graceful, 'SIGTERM');
    expect(graceful.exitCode).toBe(0);
    // Removed during the shutdown, before the process exited.
    expect(await find(graceful.pid!)).toBeUndefined();

    await stop(killed, 'SIGKILL');
    // Its row stays; three missed heartbeats (of one second) later, it is not live.
    expect(await within(10_000, async () => (await find(killed.pid!))?.live === false)).toBe(true);
    expect((await list()).items.find((item) => item.id === app.app.get(ThisInstance).id)?.live).toBe(true);
  });

  it('is not written by the CLI: a command is not an instance', async () => {
    const before = await rowIds();
    const result = await runCli(['clients:list']);
    expect(result.code).toBe(0);
    expect(await rowIds()).toEqual(before);
    // Nor would a row written and removed within the call be: the heartbeat is not in a command's application at all.
    for (const command of ['clients:list', 'users:list']) {
      const cli = await NestFactory.createApplicationContext(await CliModule.forCommand(command), { logger: false, abortOnError: false });
      try {
        expect(() => cli.get(InstanceHeartbeat, { strict: false })).toThrow();
      } finally {
        await cli.close();
      }
    }
  });

  it('lists those seen in the last 24 hours only, and the purge removes those not seen for a day', async () => {
    const now = Date.now();
    const row = (hoursAgo: number) => ({
      id: randomUUID(),
      hostname: `gone-${hoursAgo}h`,
      pid: 1,
      version: '0.0.1',
      node: '24.0.0',
      heartbeatSeconds: 30,
      startedAt: new Date(now - (hoursAgo + 1) * 3_600_000),
      lastSeenAt: new Date(now - hoursAgo * 3_600_000),
    });
    const recent = row(23);
    const old = row(48);
    for (const instance of [recent, old]) await app.app.get(InstanceStore).record(instance);

    const { items } = await list();
    expect(items.find((item) => item.id === recent.id)).toMatchObject({ hostname: 'gone-23h', live: false });
    expect(items.some((item) => item.id === old.id)).toBe(false);

    const purged = await app.app.get(PurgeService).purge();
    expect(purged.instances).toBe(1);
    const ids = await rowIds();
    expect(ids).toContain(recent.id);
    expect(ids).not.toContain(old.id);
    expect(ids).toContain(app.app.get(ThisInstance).id);
  });

  it('logs a failed heartbeat as a warning, and the list still answers', async () => {
    const heartbeat = app.app.get(InstanceHeartbeat);
    // A scheduled beat in progress is waited for first, so that the next one is this test's.
    await heartbeat.beat();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(app.app.get(InstanceStore), 'record').mockRejectedValueOnce(new Error('database unavailable'));
    await expect(heartbeat.beat()).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('Heartbeat failed, will retry at the next interval: database unavailable'));
    expect((await list()).response.status).toBe(200);
  });

  it('answers every administrator role, and is refused without a token (401), without an admin scope (403), and once the role is gone (403)', async () => {
    for (const role of ['auditor', 'client-admin', 'owner'] as const) {
      expect((await admin.request('GET', '/instances', (await admin.signIn([role])).token)).status).toBe(200);
    }
    const anonymous = await admin.request('GET', '/instances');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.items).toBeUndefined();
    const nobody = await admin.signIn([]);
    const refused = await admin.request('GET', '/instances', nobody.token);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('insufficient_scope');
    const auditor = await admin.signIn(['auditor']);
    await app.app.get(AdminRolesService).revoke(auditor.userId, 'auditor', 'cli');
    const gone = await admin.request('GET', '/instances', auditor.token);
    expect(gone.status).toBe(403);
    expect(gone.body.error).toBe('insufficient_scope');
  });
});
