import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory holding Latchkey's package.json, found from this file's location, so that views and
 * assets resolve the same way from src/ (tests), dist/src/ (npm start) and the container.
 */
function findProjectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('Could not find Latchkey\'s package.json above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

export const PROJECT_ROOT = findProjectRoot();
