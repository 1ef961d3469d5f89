/**
 * Over the wire: the key states and every documented transition, with the status each answers
 * (401 unknown/revoked/expired, 403 disabled/model/IP, 429 quota_exhausted while paused). Expiry happens by the
 * clock alone (an injected one here), with no admin action.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/shared/clock.js';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, admin, expectError } from '../admin/helpers.js';
import { chatWith, expectOk } from './limits-support.js';

const MODEL = 'states-sim';
const OTHER = 'states-other';
let gateway: TestGateway;
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  gateway = await startTestGateway({ clock });
  // 100 USD per million tokens: one call (~18 tokens) costs about 0.0018 USD.
  await addSimulatorModel(gateway, MODEL, { input_per_mtok: 100, output_per_mtok: 100 }, { settings: { output_tokens: 8 } });
  await addSimulatorModel(gateway, OTHER);
});

afterAll(async () => {
  await gateway?.close();
});

async function statusOf(keyId: string): Promise<string> {
  return (await admin<{ status: string }>(gateway, 'GET', `/admin/keys/${keyId}`)).body.status;
}

describe('key states', () => {
  it('unknown or malformed key: 401', async () => {
    expectError(await chatWith(gateway, 'sk-0123456789abcdefghijABCDEFGHIJ0123456789', { model: MODEL }), { status: 401, type: 'authentication_error', code: 'invalid_api_key' });
    expectError(await chatWith(gateway, 'not-a-key', { model: MODEL }), { status: 401, code: 'invalid_api_key' });
  });

  it('enabled → disabled (403) → enabled (200)', async () => {
    const { key, keyId } = await seedAccount(gateway);
    expectOk(await chatWith(gateway, key, { model: MODEL }));
    expect((await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { status: 'disabled' })).status).toBe(200);
    expect(await statusOf(keyId)).toBe('disabled');
    expectError(await chatWith(gateway, key, { model: MODEL }), { status: 403, type: 'permission_error', code: 'key_disabled' });
    expect((await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { status: 'enabled' })).status).toBe(200);
    expectOk(await chatWith(gateway, key, { model: MODEL }));
  });

  it('revoked: 401, and final (409 on any change back)', async () => {
    const { key, keyId } = await seedAccount(gateway);
    expect((await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { status: 'revoked' })).status).toBe(200);
    expectError(await chatWith(gateway, key, { model: MODEL }), { status: 401, code: 'revoked_api_key' });
    expectError(await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { status: 'enabled' }), { status: 409 });
    expectError(await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { status: 'disabled' }), { status: 409 });
    expectError(await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { quota_usd: 5 }), { status: 409 });
    expect(await statusOf(keyId)).toBe('revoked');
    expectError(await chatWith(gateway, key, { model: MODEL }), { status: 401, code: 'revoked_api_key' });
  });

  it('expired by the date alone (401), back by a later expires_at', async () => {
    const expiresAt = Math.floor(clock.now() / 1000) + 60;
    const { key, keyId } = await seedAccount(gateway, { key: { expires_at: expiresAt } });
    expectOk(await chatWith(gateway, key, { model: MODEL }));
    clock.set(expiresAt * 1000 - 1);
    expectOk(await chatWith(gateway, key, { model: MODEL }));
    clock.set(expiresAt * 1000);
    expectError(await chatWith(gateway, key, { model: MODEL }), { status: 401, code: 'expired_api_key' });
    expect(await statusOf(keyId)).toBe('expired');
    expect((await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { expires_at: expiresAt + 3600 })).status).toBe(200);
    expect(await statusOf(keyId)).toBe('enabled');
    expectOk(await chatWith(gateway, key, { model: MODEL }));
  });

  it('paused when spend reaches the quota cap (429 quota_exhausted), back when the cap is raised', async () => {
    // Admission holds an upper bound of the cost from the cap (prompt + max_tokens, 4096 output tokens when none is
    // given): a request that could overshoot the cap is refused before any upstream call.
    const { key, keyId } = await seedAccount(gateway, { key: { quota_usd: 0.01 } });
    expectError(await chatWith(gateway, key, { model: MODEL }), { status: 429, code: 'quota_exhausted' });
    expectOk(await chatWith(gateway, key, { model: MODEL, maxTokens: 8 }));
    await gateway.gateway.services.ledger.flush();
    const spent = (await admin<{ spent_usd: number }>(gateway, 'GET', `/admin/keys/${keyId}`)).body.spent_usd;
    expect(spent).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(0.01);
    // The cap lowered to what the key spent: paused.
    expect((await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { quota_usd: spent })).status).toBe(200);
    const paused = await chatWith(gateway, key, { model: MODEL, maxTokens: 8 });
    expectError(paused, { status: 429, type: 'rate_limit_error', code: 'quota_exhausted' });
    expect(paused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await statusOf(keyId)).toBe('paused');
    expect((await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { quota_usd: 1 })).status).toBe(200);
    expect(await statusOf(keyId)).toBe('enabled');
    expectOk(await chatWith(gateway, key, { model: MODEL }));
    // Clearing the cap works too.
    await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { quota_usd: 0.001 });
    expectError(await chatWith(gateway, key, { model: MODEL }), { status: 429, code: 'quota_exhausted' });
    await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { quota_usd: null });
    expectOk(await chatWith(gateway, key, { model: MODEL }));
  });

  it('a model outside the allowlist or a caller outside the IP allowlist: 403', async () => {
    const { key } = await seedAccount(gateway, { key: { allowed_models: [MODEL] } });
    expectOk(await chatWith(gateway, key, { model: MODEL }));
    expectError(await chatWith(gateway, key, { model: OTHER }), { status: 403, code: 'model_not_allowed' });
    const fenced = await seedAccount(gateway, { key: { ip_allowlist: ['10.0.0.0/8'] } });
    expectError(await chatWith(gateway, fenced.key, { model: MODEL }), { status: 403, code: 'ip_not_allowed' });
  });
});
