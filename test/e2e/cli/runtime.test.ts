/**
 * The project brings its own Node: `npm ci` installs the Node.js package of this platform, every npm script (and so
 * this suite) runs on it, and `bin/unigate.js` started by an older system Node starts itself again on it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assertBuilt, BIN, cleanEnv, REPO_ROOT } from './cli-process.js';

const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { optionalDependencies?: Record<string, string> };
const platformPackage = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
const bundledVersion = manifest.optionalDependencies?.[platformPackage];

/** A `node` on PATH outside node_modules (the machine's own), with its version; null when there is none. */
function systemNode(): { binary: string; major: number } | null {
  for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
    if (directory === '' || directory.includes('node_modules')) continue;
    const binary = path.join(directory, 'node');
    try {
      const version = execFileSync(binary, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
      return { binary, major: Number(version.split('.')[0]) };
    } catch {
      // not there
    }
  }
  return null;
}

const oldNode = (() => {
  const found = systemNode();
  return found !== null && found.major < 22 ? found : null;
})();

/** Prints the version of every Node process that loads it (the operator's and the one it starts). */
const PRINT_VERSION = `--import=data:text/javascript,${encodeURIComponent('console.log("node " + process.version)')}`;

const scratch: string[] = [];
afterAll(() => {
  for (const directory of scratch) rmSync(directory, { recursive: true, force: true });
});

describe('the Node that runs the gateway', () => {
  // The registry here has no macOS package of the pinned Node: there the machine's own Node runs everything.
  it.skipIf(process.platform === 'darwin')('is the version package.json pins for this platform', () => {
    expect(bundledVersion, `package.json lists no ${platformPackage}`).toBeDefined();
    expect(process.version).toBe(`v${bundledVersion}`);
  });

  it.skipIf(oldNode === null)('bin/unigate.js started by an older system Node runs on the bundled Node', () => {
    assertBuilt();
    const result = spawnSync(oldNode!.binary, [PRINT_VERSION, BIN, 'help'], { cwd: REPO_ROOT, env: cleanEnv({}), encoding: 'utf8' });
    expect(result.status).toBe(0);
    const versions = result.stdout.split('\n').filter((line) => line.startsWith('node v'));
    expect(versions).toEqual([expect.stringMatching(new RegExp(`^node v${oldNode!.major}\\.`)), `node v${bundledVersion}`]);
    expect(result.stdout).toContain('Usage: unigate <command>');
  });

  it.skipIf(oldNode === null)('bin/unigate.js without the bundled Node says which Node it needs', () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'unigate-runtime-'));
    scratch.push(directory);
    mkdirSync(path.join(directory, 'bin'));
    copyFileSync(BIN, path.join(directory, 'bin', 'unigate.js'));
    const result = spawnSync(oldNode!.binary, [path.join(directory, 'bin', 'unigate.js'), 'help'], { cwd: directory, env: cleanEnv({}), encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^unigate needs Node\.js 22\.12 or newer; this is v\d+\.\d+\.\d+\. Run "npm ci"/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
