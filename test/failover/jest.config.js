// The failover test only (scripts/test-failover.mjs): the root config's SWC transform, its own file
// pattern, so neither `npm test` nor the cluster test starts it, and no per-file database set-up:
// everything it talks to is a process it starts itself.
import base from '../../jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...base,
  rootDir: '../..',
  roots: ['<rootDir>/test/failover'],
  testMatch: ['**/*.failover-spec.ts'],
  setupFiles: [],
  // The processes a spec starts are stopped by its afterAll; a spec that failed half-way may leave a
  // socket or timer behind, and a Jest waiting on it would hold CI until its time limit.
  forceExit: true,
  // The load run spans both failovers: about a minute.
  testTimeout: 150_000,
};
