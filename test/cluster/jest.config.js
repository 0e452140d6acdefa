// The cluster test only (scripts/test-cluster.mjs): the root config's SWC transform, but its own
// file pattern, so `npm test` never starts it, and no per-file database set-up: the instances it
// starts are separate processes with their own environment.
import base from '../../jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...base,
  rootDir: '../..',
  roots: ['<rootDir>/test/cluster'],
  testMatch: ['**/*.cluster-spec.ts'],
  setupFiles: [],
  // Starting the cluster, the load run and the PostgreSQL restart each take tens of seconds.
  testTimeout: 120_000,
};
