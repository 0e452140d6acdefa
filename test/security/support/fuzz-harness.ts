import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Parameters as FcParameters } from 'fast-check';
import type { DataSource } from 'typeorm';
import type { TestApp } from '../../helpers/test-app.js';
import { rawRequest, type RawRequest, type RawResponse } from './raw-http.js';

/**
 * Shared machinery of the fuzz suite (issue 7): fast-check settings, the invariants every
 * response must hold, the database snapshot that proves a rejected request wrote nothing, and the
 * case counts written to test-results/fuzz-summary.json.
 */

/** One fixed seed for the whole suite (FUZZ_SEED overrides it), so a failure replays exactly. */
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20_260_507);

/** Runs per property: `defaultRuns` unless FUZZ_RUNS says otherwise (raise it locally for a longer hunt). */
export function fuzzRuns(defaultRuns: number): number {
  const configured = Number(process.env.FUZZ_RUNS);
  return Number.isInteger(configured) && configured > 0 ? configured : defaultRuns;
}

/**
 * fast-check settings: the fixed seed (printed with the counterexample on failure), and bounded
 * shrinking. Each failing case is an HTTP round trip, so shrinking is off unless FUZZ_SHRINK=1,
 * and then it stops after 60 s; the first counterexample is reported either way.
 */
export function fcParameters<T>(numRuns: number, examples: T[] = []): FcParameters<T> {
  const shrink = process.env.FUZZ_SHRINK === '1';
  return {
    seed: FUZZ_SEED,
    numRuns,
    examples,
    endOnFailure: !shrink,
    ...(shrink ? { interruptAfterTimeLimit: 60_000, markInterruptAsFailure: false } : {}),
    maxSkipsPerRun: 10,
    verbose: 1,
  };
}

/** Row count and a hash of the contents of every table of the application. */
export type Snapshot = Map<string, { rows: number; hash: string }>;

export async function snapshot(dataSource: DataSource): Promise<Snapshot> {
  const result: Snapshot = new Map();
  for (const meta of dataSource.entityMetadatas) {
    const table = meta.tablePath.split('.').map((part) => dataSource.driver.escape(part)).join('.');
    const rows = (await dataSource.query(`SELECT * FROM ${table}`)) as Record<string, unknown>[];
    const lines = rows.map((row) => JSON.stringify(Object.entries(row).sort(([a], [b]) => a.localeCompare(b)), (_key, value: unknown) => (value instanceof Date ? value.toISOString() : value)));
    lines.sort();
    result.set(meta.tableName, { rows: rows.length, hash: createHash('sha256').update(lines.join('\n')).digest('hex') });
  }
  return result;
}

/** The tables whose count or contents differ between two snapshots. */
export function changedTables(before: Snapshot, after: Snapshot): string[] {
  return [...after.keys()].filter((table) => before.get(table)?.hash !== after.get(table)?.hash);
}

/** Per-endpoint figures for the summary. */
export class FuzzStats {
  numRuns = 0;
  requests = 0;
  readonly statuses: Record<string, number> = {};
  /** The `error` codes answered, for the summary: which layers the cases reached. */
  readonly errors: Record<string, number> = {};
  /** HEAD answers whose connection broke after the headers (see RawResponse.brokenAfterHeaders). */
  headAnswersWithBody = 0;
  private readonly started = Date.now();

  constructor(readonly endpoint: string) {}

  count(response: RawResponse): void {
    this.requests += 1;
    this.statuses[response.status] = (this.statuses[response.status] ?? 0) + 1;
    if (response.brokenAfterHeaders) this.headAnswersWithBody += 1;
    const error = (response.json as { error?: unknown } | undefined)?.error;
    if (response.status >= 400 && typeof error === 'string') this.errors[error] = (this.errors[error] ?? 0) + 1;
  }

  toJSON(): Record<string, unknown> {
    return { numRuns: this.numRuns, requests: this.requests, statuses: this.statuses, errors: this.errors, headAnswersWithBody: this.headAnswersWithBody, durationMs: Date.now() - this.started };
  }
}

/** A request and its answer, for failure messages (bodies cut short: some are a megabyte). */
export function describeCase(request: RawRequest, response?: RawResponse): string {
  const body = request.body === undefined ? '' : `\n  body (${request.body.length} bytes): ${request.body.toString('latin1').slice(0, 300)}`;
  const answer = response ? `\n→ ${response.status} ${JSON.stringify(response.headers['content-type'] ?? '')} ${response.text.slice(0, 300)}` : '';
  return `${request.method} ${request.path.slice(0, 300)} ${JSON.stringify(request.headers ?? {}).slice(0, 300)}${body}${answer}`;
}

/**
 * Sends the request and checks what every answer must hold: an answer at all (no crash, no
 * dropped connection), a status below 500, and on a 4xx with a JSON body a string `error` key.
 */
export async function sendChecked(app: TestApp, stats: FuzzStats, request: RawRequest): Promise<RawResponse> {
  let response: RawResponse;
  try {
    response = await rawRequest(app.baseUrl, request);
  } catch (error) {
    throw new Error(`No answer (${String(error)}) to:\n${describeCase(request)}`, { cause: error });
  }
  stats.count(response);
  const where = describeCase(request, response);
  if (response.status >= 500 || response.status < 100) throw new Error(`Server error:\n${where}`);
  if (response.status >= 400 && request.method !== 'HEAD' && isJson(response)) {
    const body = response.json as Record<string, unknown> | undefined;
    if (typeof body?.error !== 'string' || body.error === '') throw new Error(`An error answer without a string "error" key:\n${where}`);
    // One vocabulary for every error, parser-level refusals included (src/http/client-error-handler.ts).
    if (!/^[a-z][a-z0-9_]*$/.test(body.error)) throw new Error(`An error code that is not snake_case:\n${where}`);
  }
  return response;
}

export function isJson(response: RawResponse): boolean {
  return /^application\/([a-z.+-]*\+)?json/i.test(String(response.headers['content-type'] ?? ''));
}

/** A JSON error answer (for endpoints that speak only JSON): a body that is JSON and has a string `error`. */
export function expectJsonError(request: RawRequest, response: RawResponse): void {
  if (request.method === 'HEAD') return;
  const body = response.json as Record<string, unknown> | undefined;
  if (!isJson(response) || typeof body?.error !== 'string') throw new Error(`Expected a JSON error body:\n${describeCase(request, response)}`);
  // RFC 6749 §5.2: printable ASCII without " and \, whatever the input was.
  if (typeof body.error_description === 'string' && !/^[\x20\x21\x23-\x5B\x5D-\x7E]*$/.test(body.error_description)) {
    throw new Error(`error_description outside RFC 6749's character set:\n${describeCase(request, response)}`);
  }
}

/** The process still answers: run after every batch of cases. */
export async function expectAlive(app: TestApp): Promise<void> {
  const response = await rawRequest(app.baseUrl, { method: 'GET', path: '/health/live' });
  if (response.status !== 200) throw new Error(`/health/live answered ${response.status} ${response.text}`);
}

/** Adds this file's figures to test-results/fuzz-summary.json (one section per database) and prints one line. */
export function writeSummary(app: TestApp, stats: FuzzStats[]): void {
  const database = app.dataSource.options.type === 'postgres' ? 'postgres' : 'sqlite';
  const dir = join(process.cwd(), 'test-results');
  const file = join(dir, 'fuzz-summary.json');
  mkdirSync(dir, { recursive: true });
  let summary: { seed: number; databases: Record<string, Record<string, unknown>> } = { seed: FUZZ_SEED, databases: {} };
  try {
    summary = JSON.parse(readFileSync(file, 'utf8')) as typeof summary;
  } catch {
    // First file of the run, or an unreadable leftover: start afresh.
  }
  summary.seed = FUZZ_SEED;
  const section = (summary.databases[database] ??= {});
  for (const stat of stats) section[stat.endpoint] = stat.toJSON();
  const endpoints = Object.entries(section).filter(([name]) => name !== 'totals').map(([, value]) => value) as Array<{ numRuns: number; requests: number }>;
  // Durations stay per endpoint: the stats of one file overlap in time, so they do not add up.
  const totals = endpoints.reduce((sum, e) => ({ numRuns: sum.numRuns + e.numRuns, requests: sum.requests + e.requests }), { numRuns: 0, requests: 0 });
  section.totals = totals;
  writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
  const line = stats.map((s) => `${s.endpoint}: ${s.numRuns} cases, ${s.requests} requests, statuses ${JSON.stringify(s.statuses)}, errors ${JSON.stringify(s.errors)}`).join('; ');
  console.log(`fuzz [${database}, seed ${FUZZ_SEED}] ${line} | ${database} so far: ${totals.numRuns} cases, ${totals.requests} requests`);
}

/**
 * The database invariant: a snapshot after every case, compared with the one before it. A
 * rejected case must leave every table as it was (row counts and contents, audit_events
 * included: the audit trail records changes that happened, never refusals); `allowed` names the
 * rare write an RFC asks for on a refusal. An accepted case moves the baseline on.
 */
export class DatabaseGuard {
  private constructor(
    private readonly app: TestApp,
    private baseline: Snapshot,
  ) {}

  static async start(app: TestApp): Promise<DatabaseGuard> {
    return new DatabaseGuard(app, await snapshot(app.dataSource));
  }

  async afterCase(rejected: boolean, where: string, allowed: (changed: string[], before: Snapshot, after: Snapshot) => boolean = () => false): Promise<string[]> {
    const after = await snapshot(this.app.dataSource);
    const changed = changedTables(this.baseline, after);
    if (rejected && changed.length > 0 && !allowed(changed, this.baseline, after)) {
      throw new Error(`A rejected request changed ${changed.join(', ')}:\n${where}`);
    }
    this.baseline = after;
    return changed;
  }

  /** After the test changed fixtures itself. */
  async rebase(): Promise<void> {
    this.baseline = await snapshot(this.app.dataSource);
  }
}
