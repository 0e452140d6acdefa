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
  // The processes a spec starts are stopped by its afterAll; a spec that failed half-way may leave a
  // socket or timer behind, and a Jest waiting on it would hold CI until its time limit.
  forceExit: true,
  // Starting the cluster, the load run and the PostgreSQL restart each take tens of seconds, and
  // several times that on a loaded CI machine (a restarted instance waits for its readiness checks).
  testTimeout: 180_000,
};
