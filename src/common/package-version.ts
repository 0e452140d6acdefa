import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './project-root.js';

/**
 * The version of Latchkey that runs, package.json's `version`: read from the file, not imported,
 * so that it is the one shipped beside dist/ (npm start, the container) as much as under the tests.
 */
export const PACKAGE_VERSION = String((JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version?: unknown }).version ?? 'unknown');
