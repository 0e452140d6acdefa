/**
 * How the server process is tuned: the one source of truth (the reasons and figures are in
 * bench/RESULTS.md, "Memory").
 *
 * - `v8FlagsAtStartup` are set from the code as the server starts (v8-heap-tuning.ts, which
 *   main.ts imports right after the Node-line check), so every way of starting it has them: npm
 *   start, the Docker image, the benchmark, a process manager.
 * - `launch` must be in place before Node starts (glibc reads MALLOC_ARENA_MAX once; V8 sizes the
 *   young generation when it creates the heap), so it lives on the command line: package.json's
 *   `start` script and the Dockerfile's ENV and CMD carry copies, which
 *   test/integration/start-command.spec.ts keeps equal to this, and the benchmark starts the server
 *   with the start script (bench/lib/start-command.mjs).
 */
export const PROCESS_TUNING = {
  /** Allocation-site pretenuring off: per-request objects die young instead of filling the old generation. */
  v8FlagsAtStartup: ['--no-allocation-site-pretenuring'],
  launch: {
    /** Two malloc arenas instead of one per thread that allocated (argon2 hashes in the thread pool). */
    env: { MALLOC_ARENA_MAX: '2' },
    /** An 8 MB semi-space (16 MB by default): a smaller young generation at the same throughput. */
    nodeArgs: ['--max-semi-space-size=8'],
    entry: 'dist/src/main.js',
  },
} as const;
