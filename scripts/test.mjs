#!/usr/bin/env node
// `npm test`: the whole suite on SQLite, then again on PostgreSQL when TEST_DATABASE_URL is set.
// Extra arguments go to Jest (e.g. `npm test -- test/e2e/token`).
import { spawnSync } from 'node:child_process';

const jest = ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning', 'node_modules/jest/bin/jest.js', '--runInBand', ...process.argv.slice(2)];
const runs = [{ name: 'SQLite', env: { ...process.env, TEST_DATABASE_URL: '' } }];
if (process.env.TEST_DATABASE_URL) runs.push({ name: 'PostgreSQL', env: process.env });

for (const run of runs) {
  console.log(`\n=== Test suite on ${run.name} ===\n`);
  const result = spawnSync(process.execPath, jest, { stdio: 'inherit', env: run.env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
