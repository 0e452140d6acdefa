/**
 * Runs before every test file, before it imports anything: each file gets its own database.
 * SQLite by default (a fresh file); PostgreSQL when TEST_DATABASE_URL is set (a fresh schema in
 * that database, created by startTestApp). Entities read the dialect when they are imported,
 * which is why this happens here and not later.
 */
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const id = `${process.pid}_${randomBytes(4).toString('hex')}`;
process.env.NODE_ENV = 'test';
// Tests read the JSON log lines of the servers they start, whatever the developer's shell sets.
delete process.env.LOG_FORMAT;
process.env.MIGRATIONS_RUN = 'true';
if (process.env.TEST_DATABASE_URL) {
  process.env.DATABASE_URL = process.env.TEST_DATABASE_URL;
  process.env.DATABASE_SCHEMA = `latchkey_test_${id}`;
} else {
  process.env.DATABASE_URL = `sqlite:${join(tmpdir(), `latchkey-test-${id}.sqlite`)}`;
  delete process.env.DATABASE_SCHEMA;
}
// Each test app opens its Prometheus listener on a free port, so apps in one worker never collide.
process.env.METRICS_PORT = '0';
// Test servers (back-channel logout receivers) listen on loopback, which outgoing requests refuse by default (SSRF).
process.env.OUTBOUND_ALLOW_PRIVATE_NETWORKS = 'true';
// Back-channel logout notifications go out within a tick of a test, and retry fast.
process.env.BACKCHANNEL_LOGOUT_POLL_MS ??= '100';
process.env.BACKCHANNEL_LOGOUT_RETRY_SECONDS ??= '1';
// Tests assert rotation as RFC 9700 §4.14.2 writes it (reuse revokes at once); the grace's own tests set their window.
process.env.REFRESH_REUSE_GRACE_SECONDS ??= '0';
