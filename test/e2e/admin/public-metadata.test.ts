/**
 * Announcements and FX rates set through /admin, read without a key on the
 * public endpoints; GET /api/status; the per-IP limit of public endpoints.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, admin, call, chat, expectError, uniqueName } from './helpers.js';

interface AnnouncementJson {
  id: string;
  title: string;
  body: string;
  level: string;
  published_at: string;
  expires_at: string | null;
}

interface FxJson {
  base: string;
  rates: Record<string, number>;
  as_of: string;
}

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
});

async function publicAnnouncements(): Promise<AnnouncementJson[]> {
  const answer = await call<{ data: AnnouncementJson[] }>(gateway.url, 'GET', '/api/public/announcements');
  expect(answer.status, answer.text).toBe(200);
  expect(Array.isArray(answer.body.data)).toBe(true);
  return answer.body.data;
}

describe('announcements', () => {
  it('a new announcement is public without a key; expired and future ones are not; DELETE removes it', async () => {
    const now = Date.now();
    const active = await admin<AnnouncementJson>(gateway, 'POST', '/admin/announcements', { title: uniqueName('Maintenance tonight'), body: 'Short downtime at 02:00 UTC.', level: 'warning' });
    expect(active.status, active.text).toBe(201);
    expect(active.body).toMatchObject({ body: 'Short downtime at 02:00 UTC.', level: 'warning', expires_at: null });
    const expired = await admin<AnnouncementJson>(gateway, 'POST', '/admin/announcements', {
      title: uniqueName('Old news'), published_at: Math.floor(now / 1000) - 7200, expires_at: new Date(now - 3_600_000).toISOString(),
    });
    expect(expired.status, expired.text).toBe(201);
    const future = await admin<AnnouncementJson>(gateway, 'POST', '/admin/announcements', {
      title: uniqueName('Coming soon'), published_at: new Date(now + 86_400_000).toISOString(),
    });
    expect(future.status, future.text).toBe(201);
    const bounded = await admin<AnnouncementJson>(gateway, 'POST', '/admin/announcements', {
      title: uniqueName('This week'), level: 'critical', published_at: Math.floor(now / 1000) - 60, expires_at: Math.floor(now / 1000) + 86_400,
    });
    expect(bounded.status, bounded.text).toBe(201);

    const shown = await publicAnnouncements();
    const titles = shown.map((item) => item.title);
    expect(titles).toContain(active.body.title);
    expect(titles).toContain(bounded.body.title);
    expect(titles).not.toContain(expired.body.title);
    expect(titles).not.toContain(future.body.title);
    const shownActive = shown.find((item) => item.id === active.body.id);
    expect(shownActive).toMatchObject({ title: active.body.title, body: 'Short downtime at 02:00 UTC.', level: 'warning' });
    expect(Number.isNaN(Date.parse(shownActive?.published_at ?? ''))).toBe(false);

    // The admin list shows all of them.
    const listed = await admin<{ data: AnnouncementJson[] }>(gateway, 'GET', '/admin/announcements?limit=200');
    expect(listed.status).toBe(200);
    const listedIds = listed.body.data.map((item) => item.id);
    for (const item of [active, expired, future, bounded]) expect(listedIds).toContain(item.body.id);

    const deleted = await admin(gateway, 'DELETE', `/admin/announcements/${active.body.id}`);
    expect(deleted.status).toBe(200);
    expect((await publicAnnouncements()).map((item) => item.id)).not.toContain(active.body.id);
    expectError(await admin(gateway, 'DELETE', `/admin/announcements/${active.body.id}`), { status: 404 });
  });

  it('validates announcements (400 naming the field)', async () => {
    expectError(await admin(gateway, 'POST', '/admin/announcements', { body: 'no title' }), { status: 400, param: 'title' });
    expectError(await admin(gateway, 'POST', '/admin/announcements', { title: '' }), { status: 400, param: 'title' });
    expectError(await admin(gateway, 'POST', '/admin/announcements', { title: 'x', level: 'apocalyptic' }), { status: 400, param: 'level' });
    expectError(await admin(gateway, 'POST', '/admin/announcements', { title: 'x', expires_at: 'whenever' }), { status: 400, param: 'expires_at' });
  });
});

describe('exchange rates', () => {
  it('before any rates: 503 with the error object; missing EUR: 400; then the public endpoint shows them with as_of', async () => {
    const before = await call(gateway.url, 'GET', '/api/fx/latest');
    expectError(before, { status: 503 });

    const missing = await admin(gateway, 'PUT', '/admin/fx', { rates: { JPY: 151.23, CNY: 7.1234 } });
    expectError(missing, { status: 400, param: 'rates.EUR' });
    expectError(await admin(gateway, 'PUT', '/admin/fx', { rates: { JPY: 151.23, CNY: -7, EUR: 0.92 } }), { status: 400, param: 'rates.CNY' });
    expectError(await admin(gateway, 'PUT', '/admin/fx', { rates: { JPY: 'lots', CNY: 7, EUR: 0.92 } }), { status: 400, param: 'rates.JPY' });
    expectError(await admin(gateway, 'PUT', '/admin/fx', {}), { status: 400, param: 'rates' });
    expectError(await call(gateway.url, 'GET', '/api/fx/latest'), { status: 503 });

    const asOf = '2025-06-02T16:00:00.000Z';
    const put = await admin<FxJson>(gateway, 'PUT', '/admin/fx', { rates: { JPY: 151.23, CNY: 7.1234, EUR: 0.9234 }, as_of: asOf });
    expect(put.status, put.text).toBe(200);

    const latest = await call<FxJson>(gateway.url, 'GET', '/api/fx/latest');
    expect(latest.status, latest.text).toBe(200);
    expect(latest.body.base).toBe('USD');
    expect(latest.body.rates).toMatchObject({ JPY: 151.23, CNY: 7.1234, EUR: 0.9234 });
    expect(latest.body.as_of).toBe(asOf);

    // A newer PUT replaces them; as_of defaults to now.
    const beforePut = Date.now() - 1000;
    expect((await admin(gateway, 'PUT', '/admin/fx', { rates: { JPY: 150, CNY: 7.2, EUR: 0.91 } })).status).toBe(200);
    const newer = await call<FxJson>(gateway.url, 'GET', '/api/fx/latest');
    expect(newer.body.rates).toMatchObject({ JPY: 150, CNY: 7.2, EUR: 0.91 });
    expect(Date.parse(newer.body.as_of)).toBeGreaterThanOrEqual(beforePut);
  });
});

interface StatusJson {
  status: string;
  version: string;
  commit: string | null;
  storage: Record<string, unknown>;
  model_families: Array<{ family: string; status: string; models: number }>;
}

describe('GET /api/status', () => {
  it('answers what a status page needs: overall and per-family health, the build; nothing about the channels', async () => {
    const upstreamKey = 'sk-status-UPSTREAM-secret-0123456789abcdef';
    const name = uniqueName('status-channel');
    expect((await admin(gateway, 'POST', '/admin/models', { id: 'status-model', owned_by: 'status-family', pricing: { input_per_mtok: 1, output_per_mtok: 1 } })).status).toBe(201);
    const created = await admin<{ id: string }>(gateway, 'POST', '/admin/channels', {
      name, type: 'openai-compatible', base_url: 'https://private-upstream.internal.example.com/v1', api_key: upstreamKey, models: ['status-model'],
    });
    expect(created.status, created.text).toBe(201);
    const simulatedName = uniqueName('status-sim');
    const simulated = await admin<{ id: string }>(gateway, 'POST', '/admin/channels', { name: simulatedName, type: 'simulator', models: ['status-model'] });
    expect(simulated.status).toBe(201);

    const status = await call<StatusJson>(gateway.url, 'GET', '/api/status');
    expect(status.status, status.text).toBe(200);
    const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(status.body).toMatchObject({ status: 'ok', version: manifest.version, storage: { ok: true } });
    expect(status.body.model_families).toContainEqual({ family: 'status-family', status: 'operational', models: 1 });
    expect(Object.keys(status.body).sort()).toEqual(['commit', 'model_families', 'status', 'storage', 'uptime_seconds', 'version']);
    for (const secret of [name, simulatedName, created.body.id, simulated.body.id, 'openai-compatible', 'simulator', 'sqlite', 'postgres', 'private-upstream', 'https://', upstreamKey, upstreamKey.slice(-4), gateway.adminToken]) {
      expect(status.text).not.toContain(secret);
    }
    // The operator still sees each channel's health, by name and type.
    const health = await admin<{ channels: Array<Record<string, unknown>> }>(gateway, 'GET', '/admin/health');
    expect(health.body.channels).toContainEqual(expect.objectContaining({ name, type: 'openai-compatible', status: 'operational', served_models: 1 }));
  });

  it('reports the commit the build recorded, or SOURCE_COMMIT when the deployment sets it', async () => {
    const recorded = JSON.parse(readFileSync(new URL('../../../dist/build-info.json', import.meta.url), 'utf8')) as { commit: string | null };
    expect((await call<StatusJson>(gateway.url, 'GET', '/api/status')).body.commit).toBe(recorded.commit);
    const pinned = await startTestGateway({ env: { SOURCE_COMMIT: '0123abc' } });
    try {
      expect((await call<StatusJson>(pinned.url, 'GET', '/api/status')).body.commit).toBe('0123abc');
    } finally {
      await pinned.close();
    }
  });
});

describe('per-IP limit of public endpoints', () => {
  let limited: TestGateway;

  beforeAll(async () => {
    limited = await startTestGateway({ env: { PUBLIC_RATE_LIMIT_PER_MINUTE: '3' } });
  });

  afterAll(async () => {
    await limited?.close();
  });

  it('the 4th public call in a minute answers 429 with Retry-After; admin and keyed calls are not affected', async () => {
    await addSimulatorModel(limited, 'public-limit-sim');
    const seeded = await seedAccount(limited, { balanceUsd: 5 });
    for (let index = 0; index < 3; index += 1) {
      const answer = await call(limited.url, 'GET', '/api/public/announcements');
      expect(answer.status, `call ${index + 1}: ${answer.text}`).toBe(200);
    }
    const refused = await call(limited.url, 'GET', '/api/public/announcements');
    expectError(refused, { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // Still refused: the limit holds for the rest of the window.
    expectError(await call(limited.url, 'GET', '/api/public/announcements'), { status: 429, code: 'rate_limit_exceeded' });

    // Admin and keyed calls do not count against (and are not blocked by) the public limit.
    for (let index = 0; index < 3; index += 1) expect((await admin(limited, 'GET', '/admin/channels')).status).toBe(200);
    for (let index = 0; index < 3; index += 1) expect((await chat(limited, seeded.key, 'public-limit-sim')).status).toBe(200);
  });
});
