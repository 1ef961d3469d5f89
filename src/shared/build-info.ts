import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from './package-root.js';

/** What a status page says about the running build. */
export interface BuildInfo {
  /** The package's version (package.json). */
  version: string;
  /** The commit the build came from, when known. */
  commit: string | null;
}

/** Where `npm run build` writes the commit it built (web/vite.config.ts), beside the compiled gateway. */
export const BUILD_INFO_FILE = path.join('dist', 'build-info.json');

function readJson(file: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return value !== null && typeof value === 'object' ? value as Record<string, unknown> : null;
  } catch {
    return null;
  }
}

/**
 * Read once at start: the version from package.json; the commit from SOURCE_COMMIT or GIT_COMMIT when the deployment
 * sets one (`configuredCommit`), else the one the build recorded, else null (a build outside a git checkout).
 */
export function readBuildInfo(configuredCommit: string | null): BuildInfo {
  const root = packageRoot();
  const version = readJson(path.join(root, 'package.json'))?.version;
  const built = readJson(path.join(root, BUILD_INFO_FILE))?.commit;
  return {
    version: typeof version === 'string' ? version : 'unknown',
    commit: configuredCommit ?? (typeof built === 'string' && built !== '' ? built : null),
  };
}
