import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository (or installed package) root: the nearest folder above this module holding package.json. The same
 * from the sources (src/shared) and from the build (dist/src/shared).
 */
export function packageRoot(): string {
  let directory = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(directory, 'package.json'))) return directory;
    const parent = path.dirname(directory);
    if (parent === directory) throw new Error('no package.json above the gateway module');
    directory = parent;
  }
}
