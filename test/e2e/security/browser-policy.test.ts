/**
 * The browser policy over the wire, with the headers a browser sends: public endpoints answer preflights and any
 * origin may read them; keyed endpoints give a preflight no permission and refuse a keyed request carrying a page's
 * Origin and fetch metadata with 403 `browser_access_denied` — unless the key lists that origin. Servers and SDKs
 * (no fetch metadata) are never affected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, admin, call, expectError } from '../admin/helpers.js';

const MODEL = 'browser-policy-model';
const PAGE = 'https://app.example.com';
/** What Chromium adds to a cross-origin fetch from a page on PAGE. */
const FROM_PAGE = { origin: PAGE, 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'empty' };

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
  await addSimulatorModel(gateway, MODEL);
});

afterAll(async () => {
  await gateway?.close();
});

function preflight(path: string, origin: string, method = 'POST'): Promise<Response> {
  return fetch(gateway.url + path, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type', 'sec-fetch-mode': 'cors' },
  });
}

const chatBody = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };

describe('public endpoints', () => {
  it.each(['/v1/models', '/api/public/announcements', '/api/status', '/api/fx/latest'])('%s answers preflight and any origin may read it', async (path) => {
    const answer = await preflight(path, PAGE, 'GET');
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-allow-methods')).toContain('GET');
    const read = await call(gateway.url, 'GET', path, { headers: FROM_PAGE });
    expect(read.status).not.toBe(403);
    expect(read.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('keyed endpoints', () => {
  it('give a preflight no permission and refuse a keyed request from a page, saying keys belong on a server', async () => {
    const { key } = await seedAccount(gateway);
    const answer = await preflight('/v1/chat/completions', PAGE);
    expect(answer.status).toBe(403);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('browser_access_denied');

    const refused = await call(gateway.url, 'POST', '/v1/chat/completions', { token: key, body: chatBody, headers: FROM_PAGE });
    const error = expectError(refused, { status: 403, type: 'permission_error', code: 'browser_access_denied' });
    expect(error.message).toContain('API keys belong on a server');
    // The page may read the refusal (so its developer sees why), nothing else.
    expect(refused.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(refused.headers.get('access-control-expose-headers')).toBeNull();

    const messages = await call(gateway.url, 'POST', '/v1/messages', {
      headers: { ...FROM_PAGE, 'x-api-key': key, 'anthropic-version': '2023-06-01', 'anthropic-dangerous-direct-browser-access': 'true' },
      body: { model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(messages.status).toBe(403);
    // A keyed model list from a page is keyed too.
    expect((await call(gateway.url, 'GET', '/v1/models', { token: key, headers: FROM_PAGE })).status).toBe(403);
  });

  it('are untouched for servers: an Origin without fetch metadata, or none at all, passes', async () => {
    const { key } = await seedAccount(gateway);
    expect((await call(gateway.url, 'POST', '/v1/chat/completions', { token: key, body: chatBody })).status).toBe(200);
    // Node's fetch adds Sec-Fetch-Mode (not Sec-Fetch-Site): a server proxying a page's Origin is not a browser.
    expect((await call(gateway.url, 'POST', '/v1/chat/completions', { token: key, body: chatBody, headers: { origin: PAGE } })).status).toBe(200);
  });

  it('let a key that lists the origin be used from that page only, and show the warning', async () => {
    const { key, keyId } = await seedAccount(gateway, { key: { allowed_origins: [PAGE] } });
    const view = await admin<{ allowed_origins: string[]; allowed_origins_warning: string }>(gateway, 'GET', `/admin/keys/${keyId}`);
    expect(view.body.allowed_origins).toEqual([PAGE]);
    expect(view.body.allowed_origins_warning).toContain('anyone who can read the page can copy the key');

    const allowed = await preflight('/v1/chat/completions', PAGE);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(allowed.headers.get('access-control-allow-headers')).toBe('authorization,content-type');
    const answer = await call(gateway.url, 'POST', '/v1/chat/completions', { token: key, body: chatBody, headers: FROM_PAGE });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(answer.headers.get('access-control-expose-headers')).toContain('x-ratelimit-remaining');

    const elsewhere = 'https://evil.example.net';
    expect((await preflight('/v1/chat/completions', elsewhere)).status).toBe(403);
    expectError(await call(gateway.url, 'POST', '/v1/chat/completions', { token: key, body: chatBody, headers: { ...FROM_PAGE, origin: elsewhere } }), { status: 403, code: 'browser_access_denied' });
  });

  it('validate origins as browsers send them', async () => {
    const { accountId } = await seedAccount(gateway);
    for (const bad of ['https://app.example.com/', 'https://app.example.com/path', 'app.example.com', 'ftp://x.example.com', '*']) {
      expectError(await admin(gateway, 'POST', `/admin/accounts/${accountId}/keys`, { allowed_origins: [bad] }), { status: 400 });
    }
    expect((await admin(gateway, 'POST', `/admin/accounts/${accountId}/keys`, { allowed_origins: ['http://localhost:5173'] })).status).toBe(201);
  });
});
