/**
 * Debian's Chromium for the console's browser tests, driven by playwright-core (never a downloaded browser).
 * Missing and running as root: installed with apt-get. Missing otherwise: the browser tests are skipped with a
 * message saying how to install it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { ensureDebianPackage } from './debian-package.js';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** True when Chromium is there (after installing it when we may). Prints why not otherwise. */
export function ensureChromium(): boolean {
  if (ensureDebianPackage(CHROMIUM_PATH, 'chromium', 'browser tests')) return true;
  console.error('\n[browser tests] SKIPPED: /usr/bin/chromium is missing. Install it with `sudo apt-get install -y chromium` (Debian/Ubuntu) and run the tests again.\n');
  return false;
}

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const webBuild = path.join(repositoryRoot, 'dist', 'web', 'index.html');

function newestModification(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const full = path.join(directory, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestModification(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/** Builds the web app (vite build) when dist/web is missing or older than web/. */
export function ensureWebBuild(): void {
  const sources = Math.max(newestModification(path.join(repositoryRoot, 'web', 'src')), statSync(path.join(repositoryRoot, 'web', 'vite.config.ts')).mtimeMs, statSync(path.join(repositoryRoot, 'web', 'index.html')).mtimeMs);
  if (existsSync(webBuild) && statSync(webBuild).mtimeMs >= sources) return;
  execFileSync(process.execPath, [path.join(repositoryRoot, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'], {
    cwd: repositoryRoot, stdio: 'inherit', timeout: 240_000, env: { ...process.env, NODE_ENV: 'production' },
  });
}

export interface LaunchedBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Chromium headless with nothing that talks to the network on its own. playwright-core gives every launch a
 * fresh temporary profile (its own --user-data-dir) and deletes it on close.
 */
export async function launchChromium(): Promise<LaunchedBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync',
    ],
    timeout: 60_000,
  });
  return {
    browser,
    async close() {
      await browser.close().catch(() => undefined);
    },
  };
}

export interface CspViolation {
  directive: string;
  blockedURI: string;
  sample: string;
}

/**
 * Collects every Content-Security-Policy violation the page reports (a blocked script, style or connection),
 * so a test can assert there were none.
 */
export async function recordCspViolations(context: BrowserContext): Promise<CspViolation[]> {
  const violations: CspViolation[] = [];
  await context.exposeBinding('__reportCspViolation', (_source, violation: CspViolation) => {
    violations.push(violation);
  });
  // A string, not a function: this file is compiled without the DOM library.
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) => {
      void window.__reportCspViolation({ directive: event.effectiveDirective, blockedURI: event.blockedURI, sample: event.sample });
    });`,
  });
  return violations;
}
