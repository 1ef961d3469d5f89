/**
 * Debian tools the tests use (Chromium for the console's browser tests, poppler's pdftotext for invoices): when a
 * tool is missing and the tests run as root, it is installed with apt-get, so `npm test` on a fresh machine needs
 * no set-up by hand. Otherwise the caller says how to install it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** True when `file` exists, after installing `debianPackage` when it did not and we may. */
export function ensureDebianPackage(file: string, debianPackage: string, label: string): boolean {
  if (existsSync(file)) return true;
  if (process.getuid?.() === 0) {
    try {
      console.warn(`[${label}] installing Debian's ${debianPackage} with apt-get (${file} not found)`);
      execFileSync('apt-get', ['update'], { stdio: 'inherit', timeout: 300_000 });
      execFileSync('apt-get', ['install', '-y', '--no-install-recommends', debianPackage], { stdio: 'inherit', timeout: 600_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    } catch (error) {
      console.error(`[${label}] apt-get install ${debianPackage} failed: ${(error as Error).message}`);
    }
  }
  return existsSync(file);
}
