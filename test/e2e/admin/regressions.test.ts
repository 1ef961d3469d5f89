/** Regression tests for bugs the end-to-end suite found; each fails again if its bug comes back. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, admin, chat, expectError, uniqueName } from './helpers.js';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
});

describe('plans', () => {
  it('renaming a plan to a name another plan has answers 409 (not 500)', async () => {
    const base = { period: 'month', quota_usd: 1, overage: { policy: 'deny' } };
    const first = await admin<{ id: string; name: string }>(gateway, 'POST', '/admin/plans', { name: uniqueName('plan-a'), ...base });
    const second = await admin<{ id: string }>(gateway, 'POST', '/admin/plans', { name: uniqueName('plan-b'), ...base });
    expectError(await admin(gateway, 'PATCH', `/admin/plans/${second.body.id}`, { name: first.body.name }), { status: 409 });
  });
});

describe('channel weight', () => {
  it('a fractional weight is either stored or refused with 400, and channel management and routing keep working', async () => {
    await addSimulatorModel(gateway, 'weight-model');
    const seeded = await seedAccount(gateway);
    const created = await admin<{ id: string; weight: number }>(gateway, 'POST', '/admin/channels', { name: uniqueName('weighted'), type: 'simulator', models: ['weight-model'], weight: 0.5 });
    if (created.status === 201) expect(created.body.weight).toBe(0.5);
    else expectError(created, { status: 400, param: 'weight' });
    const patched = await admin(gateway, 'PATCH', `/admin/channels/${(await admin<{ data: Array<{ id: string }> }>(gateway, 'GET', '/admin/channels')).body.data[0]?.id ?? ''}`, { weight: 2.5 });
    expect([200, 400]).toContain(patched.status);
    expect((await admin(gateway, 'GET', '/admin/channels')).status).toBe(200);
    await addSimulatorModel(gateway, 'weight-model-2');
    expect((await chat(gateway, seeded.key, 'weight-model-2')).status).toBe(200);
  });
});

describe('money out of range', () => {
  it('amounts the storage cannot hold are refused with 400 naming the field (not 500)', async () => {
    const seeded = await seedAccount(gateway);
    expectError(await admin(gateway, 'POST', `/admin/accounts/${seeded.accountId}/credits`, { amount_usd: 20_000_000_000 }), { status: 400, param: 'amount_usd' });
    expectError(await admin(gateway, 'POST', '/admin/models', { id: uniqueName('huge'), pricing: { input_per_mtok: 1e12 } }), { status: 400, param: 'pricing.input_per_mtok' });
    expectError(await admin(gateway, 'POST', `/admin/accounts/${seeded.accountId}/keys`, { quota_usd: 1e12 }), { status: 400, param: 'quota_usd' });
  });
});

describe('model PATCH', () => {
  it('PATCH with one price changes that price and keeps the others (as limits are merged)', async () => {
    const id = uniqueName('merge');
    await admin(gateway, 'POST', '/admin/models', { id, pricing: { input_per_mtok: 1, output_per_mtok: 2, cached_input_per_mtok: 0.5 } });
    const patched = await admin<{ pricing: Record<string, number | null> }>(gateway, 'PATCH', `/admin/models/${id}`, { pricing: { output_per_mtok: 3 } });
    expect(patched.status).toBe(200);
    expect(patched.body.pricing).toMatchObject({ input_per_mtok: 1, output_per_mtok: 3, cached_input_per_mtok: 0.5 });
  });
});
