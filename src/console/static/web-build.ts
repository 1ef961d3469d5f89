import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../shared/package-root.js';

/** One file of the built web app, held in memory with the compressed copies the build wrote beside it. */
export interface WebFile {
  body: Buffer;
  brotli: Buffer | null;
  gzip: Buffer | null;
  contentType: string;
  etag: string;
  /** Content-hashed names (`/assets/…`) never change: a year, immutable. Everything else revalidates. */
  immutable: boolean;
}

export interface WebBuild {
  directory: string;
  /** URL path (`/index.html`, `/assets/index-Ab12.js`) → file. */
  files: ReadonlyMap<string, WebFile>;
  index: WebFile;
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.webmanifest': 'application/manifest+json',
};

/** Where `npm run build` (vite build) writes the console's browser app. */
export function defaultWebDirectory(): string {
  return path.join(packageRoot(), 'dist', 'web');
}

function listFiles(directory: string, prefix = ''): string[] {
  const names: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const relative = `${prefix}/${entry.name}`;
    if (entry.isDirectory()) names.push(...listFiles(path.join(directory, entry.name), relative));
    else if (entry.isFile()) names.push(relative);
  }
  return names;
}

function readOptional(file: string): Buffer | null {
  return existsSync(file) ? readFileSync(file) : null;
}

/** The build is there (its page), without reading it. */
export function webBuildPresent(directory: string = defaultWebDirectory()): boolean {
  return existsSync(path.join(directory, 'index.html'));
}

/**
 * Reads the whole build once (a few hundred kilobytes); requests are then answered from memory, never from disk.
 * Null when the build is missing, so the listener can say how to make it.
 */
export function loadWebBuild(directory: string = defaultWebDirectory()): WebBuild | null {
  if (!existsSync(path.join(directory, 'index.html')) || !statSync(directory).isDirectory()) return null;
  const files = new Map<string, WebFile>();
  for (const name of listFiles(directory)) {
    if (name.endsWith('.br') || name.endsWith('.gz')) continue;
    const contentType = contentTypes[path.extname(name).toLowerCase()];
    if (contentType === undefined) continue;
    const absolute = path.join(directory, name);
    const body = readFileSync(absolute);
    files.set(name, {
      body,
      brotli: readOptional(`${absolute}.br`),
      gzip: readOptional(`${absolute}.gz`),
      contentType,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      immutable: name.startsWith('/assets/'),
    });
  }
  const index = files.get('/index.html');
  if (index === undefined) return null;
  return { directory, files, index };
}
