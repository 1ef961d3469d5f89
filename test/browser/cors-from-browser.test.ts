/**
 * A real browser (headless Chromium through playwright-core) on a page of another origin: the public endpoints are
 * readable from it, a keyed call is refused (its preflight gets no permission; a simple keyed request gets the 403
 * that says keys belong on a server), and a key that lists the page's origin works from that page.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type TestGateway } from '../support/gateway-harness.js';
import { addSimulatorModel } from '../e2e/admin/helpers.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const MODEL = 'browser-model';

let gateway: TestGateway;
let site: Server;
let siteOrigin: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);
  gateway = await startTestGateway();
  await addSimulatorModel(gateway, MODEL);
  const fx = await gateway.admin('PUT', '/admin/fx', { rates: { JPY: 150, CNY: 7.1, EUR: 0.92 } });
  if (fx.status !== 200) throw new Error(`PUT /admin/fx: ${JSON.stringify(fx.body)}`);
  // The page's own origin: a different port on 127.0.0.1 is a different origin from the gateway's.
  site = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.end('<!doctype html><title>app</title><p>app</p>');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage();
  await page.goto(siteOrigin);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (site === undefined ? resolve() : site.close(() => resolve())));
  await gateway?.close();
});

interface PageAnswer {
  ok: boolean;
  status?: number;
  body?: string;
  remaining?: string | null;
  failure?: string;
}

/** Runs fetch inside the page; a CORS refusal surfaces as a TypeError the page sees (`failure`). */
function fetchFromPage(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<PageAnswer> {
  return page.evaluate(async ({ url, init }) => {
    try {
      const response = await fetch(url, init);
      return { ok: true, status: response.status, body: await response.text(), remaining: response.headers.get('x-ratelimit-remaining') };
    } catch (error) {
      return { ok: false, failure: String(error) };
    }
  }, { url, init });
}

const chat = (key: string): { method: string; headers: Record<string, string>; body: string } => ({
  method: 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'from a browser' }] }),
});

describe('from a browser page on another origin', () => {
  it('reads the public endpoints', async () => {
    for (const path of ['/v1/models', '/api/status', '/api/public/announcements', '/api/fx/latest']) {
      const answer = await fetchFromPage(gateway.url + path);
      expect(answer.ok, `${path}: ${answer.failure ?? ''}`).toBe(true);
      expect(answer.status, path).toBe(200);
    }
  });

  it('cannot call a keyed endpoint: the preflight gets no permission, a simple keyed request reads the 403', async () => {
    const { key } = await seedAccount(gateway);
    const preflighted = await fetchFromPage(`${gateway.baseURL}/chat/completions`, chat(key));
    expect(preflighted.ok).toBe(false);
    expect(preflighted.failure).toContain('TypeError');

    // No custom header and a text/plain body: no preflight, so the request reaches the gateway with the page's Origin.
    const simple = await fetchFromPage(`${gateway.url}/v1beta/models/${MODEL}:generateContent?key=${encodeURIComponent(key)}`, {
      method: 'POST',
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(simple.ok, simple.failure).toBe(true);
    expect(simple.status).toBe(403);
    expect(simple.body).toContain('browser_access_denied');
    expect(simple.body).toContain('API keys belong on a server');
  });

  it('can call with a key that lists the page\'s origin, and reads its rate-limit headers', async () => {
    const { key } = await seedAccount(gateway, { key: { allowed_origins: [siteOrigin] } });
    const answer = await fetchFromPage(`${gateway.baseURL}/chat/completions`, chat(key));
    expect(answer.ok, answer.failure).toBe(true);
    expect(answer.status, answer.body).toBe(200);
    expect(JSON.parse(answer.body ?? '{}')).toMatchObject({ object: 'chat.completion' });
    expect(Number(answer.remaining)).toBeGreaterThan(0);
  });
});
