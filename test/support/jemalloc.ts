/**
 * Debian's libjemalloc2, the allocator `unigate serve` preloads where it is installed. Missing and running as root:
 * installed with apt-get, as Chromium is, so the process tests and the bench run on what operators get.
 */
import { ensureDebianPackage } from './debian-package.js';

/** Where Debian's package puts the library on this machine's architecture. */
export const JEMALLOC_PATH = `/usr/lib/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu/libjemalloc.so.2`;

/** True when the library is there (after installing it when we may). Prints why not otherwise. */
export function ensureJemalloc(): boolean {
  if (process.platform !== 'linux') return false;
  if (ensureDebianPackage(JEMALLOC_PATH, 'libjemalloc2', 'allocator tests')) return true;
  console.error(`\n[allocator tests] SKIPPED: ${JEMALLOC_PATH} is missing. Install it with \`sudo apt-get install -y libjemalloc2\` (Debian/Ubuntu) and run the tests again.\n`);
  return false;
}
