/**
 * Per-key budgets that reset each UTC day, week or month, over the wire with an injected clock: the key JSON
 * (`budget: { period, limit_usd, spent_usd, resets_at }`), enforcement like the quota cap (reserved before
 * forwarding, so parallel requests never spend more than the budget), 429 `quota_exhausted` with Retry-After up to the
 * reset, state `paused` until then; and the key state agreeing with admission while spend is still held by requests
 * in flight. SQLite by default, PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../../../src/billing/ledger-check.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { flushWrites, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, admin, expectError } from '../admin/helpers.js';
import { chatWith, expectOk } from './limits-support.js';

/** One cent a request, whatever the tokens: reservations and charges are exact. */
const CENT = 'budget-cent';
const SLOW_CENT = 'budget-slow-cent';

let gateway: TestGateway;
// Tuesday 2026-03-10 10:00 UTC.
const clock = new ManualClock(Date.UTC(2026, 2, 10, 10, 0, 0));

beforeAll(async () => {
  gateway = await startTestGateway({ clock });
  await addSimulatorModel(gateway, CENT, { per_request: 0.01 }, { settings: { output_tokens: 4 } });
  await addSimulatorModel(gateway, SLOW_CENT, { per_request: 0.01 }, { settings: { output_tokens: 30, chunk_delay_ms: 30 } });
});

afterAll(async () => {
  await gateway?.close();
});

interface KeyJson {
  status: string;
  spent_usd: number;
  quota_usd: number | null;
  held_usd: number;
  budget: { period: string; limit_usd: number; spent_usd: number; resets_at: string } | null;
}

async function keyView(keyId: string): Promise<KeyJson> {
  const answer = await admin<KeyJson>(gateway, 'GET', `/admin/keys/${keyId}`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body;
}

describe('key budgets', () => {
  it('shows the budget, refuses at the limit with Retry-After to the UTC reset, reads paused, and starts again next period', async () => {
    clock.set(Date.UTC(2026, 2, 10, 10, 0, 0));
    const { keyId, key } = await seedAccount(gateway, { key: { budget: { period: 'day', limit_usd: 0.03 } } });
    expect((await keyView(keyId)).budget).toEqual({ period: 'day', limit_usd: 0.03, spent_usd: 0, resets_at: '2026-03-11T00:00:00.000Z' });
    for (let index = 0; index < 3; index += 1) expectOk(await chatWith(gateway, key, { model: CENT }));
    clock.set(Date.UTC(2026, 2, 10, 23, 59, 0));
    const refused = await chatWith(gateway, key, { model: CENT });
    expectError(refused, { status: 429, type: 'rate_limit_error', code: 'quota_exhausted' });
    expect(refused.headers.get('retry-after')).toBe('60');
    const paused = await keyView(keyId);
    expect(paused).toMatchObject({ status: 'paused', spent_usd: 0.03, budget: { spent_usd: 0.03, limit_usd: 0.03 } });

    clock.set(Date.UTC(2026, 2, 11, 0, 0, 0));
    expect(await keyView(keyId)).toMatchObject({ status: 'enabled', budget: { spent_usd: 0, resets_at: '2026-03-12T00:00:00.000Z' } });
    expectOk(await chatWith(gateway, key, { model: CENT }));
    expect(await keyView(keyId)).toMatchObject({ status: 'enabled', spent_usd: 0.04, budget: { spent_usd: 0.01 } });
  });

  it('weeks start on Monday and months on the 1st (UTC); raising the limit keeps the spend, a new period resets it, null removes it', async () => {
    clock.set(Date.UTC(2026, 2, 10, 10, 0, 0));
    const { keyId, key } = await seedAccount(gateway, { key: { budget: { period: 'week', limit_usd: 0.01 } } });
    expect((await keyView(keyId)).budget?.resets_at).toBe('2026-03-16T00:00:00.000Z');
    expectOk(await chatWith(gateway, key, { model: CENT }));
    expectError(await chatWith(gateway, key, { model: CENT }), { status: 429, code: 'quota_exhausted' });
    const raised = await admin<KeyJson>(gateway, 'PATCH', `/admin/keys/${keyId}`, { budget: { period: 'week', limit_usd: 0.02 } });
    expect(raised.body).toMatchObject({ status: 'enabled', budget: { limit_usd: 0.02, spent_usd: 0.01 } });
    expectOk(await chatWith(gateway, key, { model: CENT }));
    const monthly = await admin<KeyJson>(gateway, 'PATCH', `/admin/keys/${keyId}`, { budget: { period: 'month', limit_usd: 0.02 } });
    expect(monthly.body.budget).toEqual({ period: 'month', limit_usd: 0.02, spent_usd: 0, resets_at: '2026-04-01T00:00:00.000Z' });
    const removed = await admin<KeyJson>(gateway, 'PATCH', `/admin/keys/${keyId}`, { budget: null });
    expect(removed.body.budget).toBeNull();
    expectError(await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { budget: { period: 'year', limit_usd: 1 } }), { status: 400 });
    expectError(await admin(gateway, 'PATCH', `/admin/keys/${keyId}`, { budget: { period: 'day', limit_usd: -1 } }), { status: 400 });
  });

  it('parallel requests never spend more than the budget, and the books balance', async () => {
    clock.set(Date.UTC(2026, 2, 10, 12, 0, 0));
    const { accountId, keyId, key } = await seedAccount(gateway, { key: { budget: { period: 'day', limit_usd: 0.05 } } });
    const answers = await Promise.all(Array.from({ length: 20 }, () => chatWith(gateway, key, { model: CENT })));
    const admitted = answers.filter((answer) => answer.status === 200).length;
    for (const answer of answers.filter((candidate) => candidate.status !== 200)) expectError(answer, { status: 429, code: 'quota_exhausted' });
    expect(admitted).toBe(5);
    await flushWrites(gateway);
    expect(await keyView(keyId)).toMatchObject({ status: 'paused', spent_usd: 0.05, budget: { spent_usd: 0.05 } });
    expect((await checkLedger(gateway.gateway.services.storage, accountId)).problems).toEqual([]);
  });
});

describe('a key\'s state agrees with admission', () => {
  it('reads paused while requests in flight hold what is left of its cap, and enabled once they settle below it', async () => {
    clock.set(Date.UTC(2026, 2, 10, 14, 0, 0));
    const { keyId, key } = await seedAccount(gateway, { key: { quota_usd: 0.02 } });
    const streams = await Promise.all([0, 1].map(() => fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: SLOW_CENT, stream: true, messages: [{ role: 'user', content: 'hold' }] }),
    })));
    expect(streams.map((stream) => stream.status)).toEqual([200, 200]);
    const refused = expectError(await chatWith(gateway, key, { model: CENT }), { status: 429, code: 'quota_exhausted' });
    expect(refused.message).toContain('the key is paused');
    expect(await keyView(keyId)).toMatchObject({ status: 'paused', spent_usd: 0 });
    // Both streams finish and are billed their request fee: the cap is reached.
    await Promise.all(streams.map((stream) => stream.text()));
    await flushWrites(gateway);
    expect(await keyView(keyId)).toMatchObject({ status: 'paused', spent_usd: 0.02 });
    expectError(await chatWith(gateway, key, { model: CENT }), { status: 429, code: 'quota_exhausted' });
    const raised = await admin<KeyJson>(gateway, 'PATCH', `/admin/keys/${keyId}`, { quota_usd: 0.03 });
    expect(raised.body.status).toBe('enabled');
    expectOk(await chatWith(gateway, key, { model: CENT }));
  });

  it('a request larger than what is left is refused while the key stays enabled, and the message says why', async () => {
    clock.set(Date.UTC(2026, 2, 10, 14, 30, 0));
    const { keyId, key } = await seedAccount(gateway, { key: { quota_usd: 0.015 } });
    const stream = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: SLOW_CENT, stream: true, messages: [{ role: 'user', content: 'hold' }] }),
    });
    expect(stream.status).toBe(200);
    const refused = expectError(await chatWith(gateway, key, { model: CENT }), { status: 429, code: 'quota_exhausted' });
    expect(refused.message).toBe('This request could cost up to 0.01 USD, more than the 0.005 USD left of this API key\'s quota cap. Send a lower max_tokens (or a shorter prompt).');
    expect(await keyView(keyId)).toMatchObject({ status: 'enabled', held_usd: 0.01 });
    await stream.text();
  });

  it('a budget held by requests in flight reads paused too', async () => {
    clock.set(Date.UTC(2026, 2, 10, 15, 0, 0));
    const { keyId, key } = await seedAccount(gateway, { key: { budget: { period: 'day', limit_usd: 0.01 } } });
    const stream = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: SLOW_CENT, stream: true, messages: [{ role: 'user', content: 'hold' }] }),
    });
    expect(stream.status).toBe(200);
    expect(await keyView(keyId)).toMatchObject({ status: 'paused', budget: { spent_usd: 0 } });
    const refused = await chatWith(gateway, key, { model: CENT });
    expect(expectError(refused, { status: 429, code: 'quota_exhausted' }).message).toBe('Nothing is left of this API key\'s budget for the current period: the key is paused. It resets at the start of the next period.');
    expect(Number(refused.headers.get('retry-after'))).toBe(9 * 3600);
    await stream.text();
  });
});

