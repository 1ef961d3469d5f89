/**
 * Admission keeps what a key's requests share (its windows, its project's and its account's, the tier's limits) in a
 * plan kept with the key: each edit of a tier, of an account's own limits and of a project's limits is in force on
 * the very next request, seen in the rate-limit headers of its answer (the tightest window) and in the refusal that
 * follows. One clock window throughout, so every request counts in the same windows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/shared/clock.js';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, admin } from '../admin/helpers.js';
import { chatWith, expectOk, expectRateLimited, MINUTE, nextWindow, rateLimitHeadersOf } from './limits-support.js';

const MODEL = 'limit-edits-model';

let gateway: TestGateway;
const clock = new ManualClock(Math.floor(Date.now() / MINUTE) * MINUTE);

beforeAll(async () => {
  gateway = await startTestGateway({ clock });
  await addSimulatorModel(gateway, MODEL, undefined, { settings: { output_tokens: 8 } });
});

afterAll(async () => {
  await gateway?.close();
});

describe('limit edits', () => {
  it('a tier edit, an account override and a project limit each apply to the next request of a key already admitted', async () => {
    expect((await admin(gateway, 'POST', '/admin/tiers', { name: 'limit-edits', rpm: 50 })).status).toBe(201);
    const { accountId } = await seedAccount(gateway);
    expect((await admin(gateway, 'PATCH', `/admin/accounts/${accountId}`, { tier: 'limit-edits' })).status).toBe(200);
    const project = await admin<{ id: string }>(gateway, 'POST', `/admin/accounts/${accountId}/projects`, { name: 'edits', rpm: 1000 });
    expect(project.status, project.text).toBe(201);
    const created = await admin<{ key: string }>(gateway, 'POST', `/admin/accounts/${accountId}/keys`, { project_id: project.body.id });
    expect(created.status, created.text).toBe(201);
    const key = created.body.key;
    const start = nextWindow(clock, 5_000);
    const reset = (start + MINUTE) / 1000;

    const first = await chatWith(gateway, key, { model: MODEL });
    expectOk(first);
    expect(rateLimitHeadersOf(first)).toEqual({ limit: 50, remaining: 49, reset, dimension: 'account-rpm' });

    // The tier's limit.
    expect((await admin(gateway, 'PATCH', '/admin/tiers/limit-edits', { rpm: 20 })).status).toBe(200);
    const second = await chatWith(gateway, key, { model: MODEL });
    expectOk(second);
    expect(rateLimitHeadersOf(second)).toEqual({ limit: 20, remaining: 18, reset, dimension: 'account-rpm' });

    // The account's own limit, over its tier's.
    expect((await admin(gateway, 'PATCH', `/admin/accounts/${accountId}`, { rpm: 10 })).status).toBe(200);
    const third = await chatWith(gateway, key, { model: MODEL });
    expectOk(third);
    expect(rateLimitHeadersOf(third)).toEqual({ limit: 10, remaining: 7, reset, dimension: 'account-rpm' });

    // The key's project.
    expect((await admin(gateway, 'PATCH', `/admin/accounts/${accountId}/projects/${project.body.id}`, { rpm: 5 })).status).toBe(200);
    const fourth = await chatWith(gateway, key, { model: MODEL });
    expectOk(fourth);
    expect(rateLimitHeadersOf(fourth)).toEqual({ limit: 5, remaining: 1, reset, dimension: 'project-rpm' });
    expectOk(await chatWith(gateway, key, { model: MODEL }));
    expectRateLimited(await chatWith(gateway, key, { model: MODEL }), 'project-rpm');

    // Limits cleared again: the account's override gives way to the tier's, and the project's refusal is gone with its limit.
    expect((await admin(gateway, 'PATCH', `/admin/accounts/${accountId}/projects/${project.body.id}`, { rpm: null })).status).toBe(200);
    expect((await admin(gateway, 'PATCH', `/admin/accounts/${accountId}`, { rpm: null })).status).toBe(200);
    const sixth = await chatWith(gateway, key, { model: MODEL });
    expectOk(sixth);
    expect(rateLimitHeadersOf(sixth)).toEqual({ limit: 20, remaining: 14, reset, dimension: 'account-rpm' });
  });
});
