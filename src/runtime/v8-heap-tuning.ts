import { setFlagsFromString } from 'node:v8';
import { PROCESS_TUNING } from './process-tuning.js';

/**
 * Sets the V8 flags of process-tuning.ts before any other module loads (main.ts imports this
 * right after node-line.ts, which loads nothing): allocation-site pretenuring off.
 *
 * Why: during start-up and the first requests, V8 sees objects from some allocation sites survive
 * young-generation collections and decides to allocate everything from those sites straight into
 * the old generation. On a busy server most of those objects are per-request and die within
 * milliseconds, so the old generation fills with garbage and the collector runs mark-compacts
 * constantly. Without pretenuring they die young, where collecting them is nearly free: more
 * throughput, a lower p99 and less memory (the figures are in bench/RESULTS.md, "Memory").
 *
 * The flag only changes where new objects are placed, never what a program computes. Setting it
 * at run time rather than on the command line keeps every way of starting the server (npm start,
 * the Docker image, the benchmark, a process manager) on the same setting.
 */
for (const flag of PROCESS_TUNING.v8FlagsAtStartup) setFlagsFromString(flag);
