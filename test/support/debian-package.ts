/**
 * Debian tools the tests use (Chromium for the console's browser tests, poppler's pdftotext for invoices): when a
 * tool is missing and the tests run as root, it is installed with apt-get, so `npm test` on a fresh machine needs
 * no set-up by hand. Otherwise the caller says how to install it (and skips, outside CI).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** How long an install waits, in all, for another apt-get or dpkg (another test file installing its tool) to finish. */
const APT_LOCK_WAIT_MS = 300_000;
const APT_RETRY_PAUSE_MS = 3_000;

/**
 * True when `file` exists, after installing `debianPackage` when it did not and we may. With
 * REQUIRE_TEST_TOOLS=1 (set by .ci/run) a tool that is still missing throws instead: in CI, tests that cannot run
 * must fail the suite, not skip as if they had passed.
 */
export function ensureDebianPackage(file: string, debianPackage: string, label: string): boolean {
  const present = findOrInstall(file, debianPackage, label);
  if (!present && process.env.REQUIRE_TEST_TOOLS === '1') {
    throw new Error(`[${label}] ${file} is missing and Debian's ${debianPackage} could not be installed; REQUIRE_TEST_TOOLS=1 makes that a failure`);
  }
  return present;
}

function findOrInstall(file: string, debianPackage: string, label: string): boolean {
  if (existsSync(file)) return true;
  if (process.getuid?.() === 0) {
    console.warn(`[${label}] installing Debian's ${debianPackage} with apt-get (${file} not found)`);
    // Test files run in parallel and may install their tools at the same moment: apt-get waits for the other's lock,
    // and a run that still fails (a lock apt does not wait for) is tried again until the deadline.
    const lockWait = ['-o', `DPkg::Lock::Timeout=${APT_LOCK_WAIT_MS / 1000}`];
    const deadline = Date.now() + APT_LOCK_WAIT_MS;
    for (let attempt = 1; !existsSync(file); attempt++) {
      try {
        execFileSync('apt-get', [...lockWait, 'update'], { stdio: 'inherit', timeout: 300_000 });
        execFileSync('apt-get', [...lockWait, 'install', '-y', '--no-install-recommends', debianPackage], { stdio: 'inherit', timeout: 600_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
        break;
      } catch (error) {
        console.error(`[${label}] apt-get install ${debianPackage} failed (attempt ${attempt}): ${(error as Error).message}`);
        if (Date.now() + APT_RETRY_PAUSE_MS > deadline) break;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, APT_RETRY_PAUSE_MS);
      }
    }
  }
  return existsSync(file);
}
