/**
 * The console listener serves the built web app: the page with its security headers and revalidation, hashed
 * assets cached for a year in the encoding the client takes, client routes falling back to the page, and the
 * API and health check untouched by the fallback.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway-harness.js';
import { ensureWebBuild } from '../support/chromium.js';

let gateway: TestGateway;

beforeAll(async () => {
  ensureWebBuild();
  gateway = await startTestGateway({ database: 'sqlite' });
}, 240_000);

afterAll(async () => {
  await gateway?.close();
});

interface RawAnswer { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

/** node:http rather than fetch: fetch decodes bodies itself and hides Content-Encoding. */
function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${gateway.consoleUrl}${path}`, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.setTimeout(10_000, () => request.destroy(new Error('timeout')));
    request.end();
  });
}

function assetPaths(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1] as string);
}

describe('web app serving', () => {
  it('answers the page with a strict CSP, no-cache, and the other security headers', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("require-trusted-types-for 'script'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['x-frame-options']).toBe('DENY');
    const html = page.body.toString('utf8');
    expect(html).toContain('<div id="root"></div>');
    // No inline script: every script is a file of the build.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(assetPaths(html).length).toBeGreaterThanOrEqual(2);
  });

  it('revalidates the page by ETag', async () => {
    const first = await get('/');
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^".+"$/);
    const again = await get('/', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  it('serves hashed assets immutable, in brotli, gzip or identity as the client accepts', async () => {
    const html = (await get('/')).body.toString('utf8');
    const script = assetPaths(html).find((path) => path.endsWith('.js'));
    expect(script).toBeDefined();
    const plain = await get(script as string);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('accept-encoding');

    const brotli = await get(script as string, { 'accept-encoding': 'gzip, deflate, br' });
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(brotli.body).equals(plain.body)).toBe(true);
    expect(brotli.body.length).toBeLessThan(plain.body.length / 2);

    const gzip = await get(script as string, { 'accept-encoding': 'gzip, br;q=0' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);

    const head = await get(script as string, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(Number(head.headers['content-length'])).toBe(plain.body.length);
    expect(head.body.length).toBe(0);
  });

  it('answers client routes with the page, missing files with 404, and leaves /api and /healthz alone', async () => {
    for (const route of ['/keys', '/usage', '/playground', '/verify-email?token=abc', '/reset-password?token=abc', '/security/sessions']) {
      const page = await get(route);
      expect(page.status, route).toBe(200);
      expect(page.headers['content-type'], route).toBe('text/html; charset=utf-8');
      expect(String(page.headers['content-security-policy']), route).toContain("script-src 'self'");
    }
    const missingAsset = await get('/assets/index-doesnotexist.js');
    expect(missingAsset.status).toBe(404);
    expect(String(missingAsset.headers['content-type'])).not.toContain('html');
    const missingFile = await get('/robots.txt');
    expect(missingFile.status).toBe(404);

    const api = await get('/api/no-such-route');
    expect(api.status).toBe(404);
    expect(JSON.parse(api.body.toString('utf8'))).toMatchObject({ error: { code: expect.any(String) } });
    const health = await get('/healthz');
    expect(JSON.parse(health.body.toString('utf8'))).toEqual({ status: 'ok' });
  });
});
