/**
 * Every limit dimension over the wire, on the in-process backend, with an injected clock so window edges are exact:
 * per-key RPM, TPM (estimate, then corrected) and concurrency (streams, aborts, upstream failures), per-account
 * RPM/TPM from the tier, per-model, per-IP public endpoints; the headers of the tightest dimension; Retry-After.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InMemoryRateLimiter } from '../../../src/limits/in-memory-rate-limiter.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { DEFAULT_TIER_RPM } from '../../../src/storage/migrations/0007-account-lifecycle-and-key-budgets.js';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, admin, call } from '../admin/helpers.js';
import { chatWith, expectOk, expectRateLimited, MINUTE, nextWindow, rateLimitHeadersOf } from './limits-support.js';

const FAST = 'limits-fast';
const SLOW = 'limits-slow';
const STREAMY = 'limits-streamy';
const DEAD = 'limits-dead';

let gateway: TestGateway;
const clock = new ManualClock(Math.floor(Date.now() / MINUTE) * MINUTE);

beforeAll(async () => {
  gateway = await startTestGateway({ clock, env: { PUBLIC_RATE_LIMIT_PER_MINUTE: '3' } });
  await addSimulatorModel(gateway, FAST, undefined, { settings: { output_tokens: 8 } });
  // Slow enough that the requests a test sends while it runs arrive before it ends, even on a loaded machine.
  await addSimulatorModel(gateway, SLOW, undefined, { settings: { output_tokens: 8, latency_ms: 1000 } });
  await addSimulatorModel(gateway, STREAMY, undefined, { settings: { output_tokens: 200, chunk_delay_ms: 50 } });
  const model = await admin(gateway, 'POST', '/admin/models', { id: DEAD, pricing: { input_per_mtok: 1 } });
  expect(model.status, model.text).toBe(201);
  const channel = await admin(gateway, 'POST', '/admin/channels', { name: 'dead-upstream', type: 'openai-compatible', base_url: 'http://127.0.0.1:1/v1', api_key: 'sk-dead', models: [DEAD] });
  expect(channel.status, channel.text).toBe(201);
});

afterAll(async () => {
  await gateway?.close();
});

function slotsInUse(keyId: string): number {
  return (gateway.gateway.services.limiter as InMemoryRateLimiter).inUse(`key:${keyId}:concurrency`);
}

describe('per-key RPM', () => {
  it('admits the limit, answers the headers of the window, then 429 with Retry-After to the window end', async () => {
    const { key } = await seedAccount(gateway, { key: { rpm: 2 } });
    const start = nextWindow(clock, 10_000);
    const first = await chatWith(gateway, key, { model: FAST });
    expectOk(first);
    expect(rateLimitHeadersOf(first)).toEqual({ limit: 2, remaining: 1, reset: (start + MINUTE) / 1000, dimension: 'key-rpm' });
    expect(rateLimitHeadersOf(await chatWith(gateway, key, { model: FAST })).remaining).toBe(0);
    const refused = await chatWith(gateway, key, { model: FAST });
    expect(expectRateLimited(refused, 'key-rpm')).toBe(50);
    expect(rateLimitHeadersOf(refused)).toEqual({ limit: 2, remaining: 0, reset: (start + MINUTE) / 1000, dimension: 'key-rpm' });
  });

  it('refuses until the last millisecond of the window and admits at its first', async () => {
    const { key } = await seedAccount(gateway, { key: { rpm: 1 } });
    const start = nextWindow(clock, 30_000);
    expectOk(await chatWith(gateway, key, { model: FAST }));
    clock.set(start + 58_500);
    expect(expectRateLimited(await chatWith(gateway, key, { model: FAST }))).toBe(2);
    clock.set(start + MINUTE - 1);
    expect(expectRateLimited(await chatWith(gateway, key, { model: FAST }))).toBe(1);
    clock.set(start + MINUTE);
    const next = await chatWith(gateway, key, { model: FAST });
    expectOk(next);
    expect(rateLimitHeadersOf(next)).toMatchObject({ remaining: 0, reset: (start + 2 * MINUTE) / 1000 });
  });

  it('counts refused requests of other dimensions nowhere: a 403 or 404 model takes no request from the key', async () => {
    const { key } = await seedAccount(gateway, { key: { rpm: 1, allowed_models: [FAST] } });
    nextWindow(clock, 1000);
    expect((await chatWith(gateway, key, { model: SLOW })).status).toBe(403);
    expect((await chatWith(gateway, key, { model: 'no-such-model' })).status).toBe(400);
    expectOk(await chatWith(gateway, key, { model: FAST }));
  });
});

describe('per-key TPM', () => {
  it('charges prompt plus max_tokens before forwarding and corrects by the real usage afterwards', async () => {
    const { key } = await seedAccount(gateway, { key: { tpm: 1000 } });
    nextWindow(clock, 1000);
    const first = await chatWith(gateway, key, { model: FAST, maxTokens: 400 });
    expectOk(first);
    const headers = rateLimitHeadersOf(first);
    expect(headers).toMatchObject({ limit: 1000, dimension: 'key-tpm' });
    const estimate = 1000 - headers.remaining;
    expect(estimate).toBeGreaterThan(400);
    const usage = (first.body as { usage: { total_tokens: number } }).usage.total_tokens;
    expect(usage).toBeLessThan(estimate);
    // The second identical request sees the first corrected to its real usage, plus its own estimate.
    const second = await chatWith(gateway, key, { model: FAST, maxTokens: 400 });
    expectOk(second);
    expect(rateLimitHeadersOf(second).remaining).toBe(1000 - usage - estimate);
  });

  it('refuses an estimate that does not fit; one larger than the whole limit passes only an untouched window', async () => {
    const { key } = await seedAccount(gateway, { key: { tpm: 500 } });
    const start = nextWindow(clock, 1000);
    const first = await chatWith(gateway, key, { model: FAST, maxTokens: 300 });
    expectOk(first);
    // Corrected to its real usage: what is left is the limit minus that.
    const used = (first.body as { usage: { total_tokens: number } }).usage.total_tokens;
    const estimateOf = (maxTokens: number): number => 500 - rateLimitHeadersOf(first).remaining - 300 + maxTokens;
    const refused = await chatWith(gateway, key, { model: FAST, maxTokens: 500 - used - estimateOf(0) + 1 });
    expect(expectRateLimited(refused, 'key-tpm')).toBe(59);
    expect(rateLimitHeadersOf(refused)).toMatchObject({ limit: 500, remaining: 500 - used, dimension: 'key-tpm' });
    expectOk(await chatWith(gateway, key, { model: FAST, maxTokens: 500 - used - estimateOf(0) }));
    // 5000 > 500: never fits, so it is charged as the whole window, admitted at the start of a fresh one …
    clock.set(start + MINUTE + 10);
    const large = await chatWith(gateway, key, { model: FAST, maxTokens: 5000 });
    expectOk(large);
    expect(rateLimitHeadersOf(large).remaining).toBe(0);
    // … and corrected to its real usage, so the window has room again.
    const usage = (large.body as { usage: { total_tokens: number } }).usage.total_tokens;
    const after = await chatWith(gateway, key, { model: FAST, maxTokens: 100 });
    expectOk(after);
    expect(rateLimitHeadersOf(after).remaining).toBeLessThan(500 - usage - 100);
  });
});

describe('per-key concurrency', () => {
  it('counts requests in flight and releases on completion', async () => {
    const { key, keyId } = await seedAccount(gateway, { key: { concurrency: 1 } });
    const slow = chatWith(gateway, key, { model: SLOW });
    await expect.poll(() => slotsInUse(keyId), { timeout: 5000, interval: 10 }).toBe(1);
    const refused = await chatWith(gateway, key, { model: FAST });
    expect(expectRateLimited(refused)).toBe(1);
    expectOk(await slow);
    expect(slotsInUse(keyId)).toBe(0);
    expectOk(await chatWith(gateway, key, { model: FAST }));
    expect(slotsInUse(keyId)).toBe(0);
  });

  it('holds the slot for an open stream and gives it back when the caller aborts', async () => {
    const { key, keyId } = await seedAccount(gateway, { key: { concurrency: 1 } });
    const abort = new AbortController();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: STREAMY, stream: true, messages: [{ role: 'user', content: 'stream please' }] }),
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body?.getReader();
    await reader?.read();
    expect(slotsInUse(keyId)).toBe(1);
    expectRateLimited(await chatWith(gateway, key, { model: FAST }));
    abort.abort();
    await reader?.cancel().catch(() => undefined);
    await expect.poll(() => slotsInUse(keyId), { timeout: 5000, interval: 10 }).toBe(0);
    expectOk(await chatWith(gateway, key, { model: FAST }));
  });

  it('gives the slot back when every upstream fails', async () => {
    const { key, keyId } = await seedAccount(gateway, { key: { concurrency: 1 } });
    const failed = await chatWith(gateway, key, { model: DEAD });
    expect(failed.status, failed.text).toBeGreaterThanOrEqual(500);
    expect(slotsInUse(keyId)).toBe(0);
    expectOk(await chatWith(gateway, key, { model: FAST }));
  });

  it('takes nothing from the rate windows when it refuses', async () => {
    const { key, keyId } = await seedAccount(gateway, { key: { concurrency: 1, rpm: 2 } });
    nextWindow(clock, 1000);
    const slow = chatWith(gateway, key, { model: SLOW });
    // The slow request holds the key's one slot before the others are sent.
    await expect.poll(() => slotsInUse(keyId), { timeout: 5000, interval: 10 }).toBe(1);
    expectRateLimited(await chatWith(gateway, key, { model: FAST }));
    expectRateLimited(await chatWith(gateway, key, { model: FAST }));
    expectOk(await slow);
    const second = await chatWith(gateway, key, { model: FAST });
    expectOk(second);
    expect(rateLimitHeadersOf(second)).toMatchObject({ dimension: 'key-rpm', remaining: 0 });
  });
});

describe('per-account limits from the tier', () => {
  it('sums every key of the account against the tier RPM; a tier change applies at once', async () => {
    const tier = await admin(gateway, 'POST', '/admin/tiers', { name: 'limits-small', rpm: 3 });
    expect(tier.status, tier.text).toBe(201);
    const { accountId, key: first } = await seedAccount(gateway);
    expect((await admin(gateway, 'PATCH', `/admin/accounts/${accountId}`, { tier: 'limits-small' })).status).toBe(200);
    const second = await admin<{ key: string }>(gateway, 'POST', `/admin/accounts/${accountId}/keys`, {});
    const start = nextWindow(clock, 15_000);
    const answers = [];
    for (const key of [first, second.body.key, first]) answers.push(await chatWith(gateway, key, { model: FAST }));
    for (const answer of answers) expectOk(answer);
    expect(rateLimitHeadersOf(answers[2] as never)).toEqual({ limit: 3, remaining: 0, reset: (start + MINUTE) / 1000, dimension: 'account-rpm' });
    expect(expectRateLimited(await chatWith(gateway, second.body.key, { model: FAST }), 'account-rpm')).toBe(45);

    expect((await admin(gateway, 'PATCH', '/admin/tiers/limits-small', { rpm: 4 })).status).toBe(200);
    expectOk(await chatWith(gateway, second.body.key, { model: FAST }));
    expectRateLimited(await chatWith(gateway, first, { model: FAST }), 'account-rpm');
  });

  it('limits the account TPM across keys', async () => {
    expect((await admin(gateway, 'POST', '/admin/tiers', { name: 'limits-tokens', tpm: 600 })).status).toBe(201);
    const { accountId, key } = await seedAccount(gateway);
    await admin(gateway, 'PATCH', `/admin/accounts/${accountId}`, { tier: 'limits-tokens' });
    const other = await admin<{ key: string }>(gateway, 'POST', `/admin/accounts/${accountId}/keys`, {});
    nextWindow(clock, 1000);
    const first = await chatWith(gateway, key, { model: FAST, maxTokens: 300 });
    expectOk(first);
    expect(rateLimitHeadersOf(first).dimension).toBe('account-tpm');
    // The first was corrected to its real usage (far below its estimate); the next must fit in what is left.
    const used = (first.body as { usage: { total_tokens: number } }).usage.total_tokens;
    expectRateLimited(await chatWith(gateway, other.body.key, { model: FAST, maxTokens: 600 - used }), 'account-tpm');
    expectOk(await chatWith(gateway, other.body.key, { model: FAST, maxTokens: 100 }));
  });

  it('gives an account on a deleted tier the default tier, whose limits the operator sets', async () => {
    const { accountId, key } = await seedAccount(gateway);
    expect((await admin(gateway, 'POST', '/admin/tiers', { name: 'limits-doomed', rpm: 1 })).status).toBe(201);
    expect((await admin(gateway, 'PATCH', `/admin/accounts/${accountId}`, { tier: 'limits-doomed' })).status).toBe(200);
    expect((await admin(gateway, 'DELETE', '/admin/tiers/limits-doomed')).status).toBe(200);
    nextWindow(clock, 1000);
    for (let index = 0; index < 5; index += 1) {
      const answer = await chatWith(gateway, key, { model: FAST });
      expectOk(answer);
      expect(rateLimitHeadersOf(answer)).toMatchObject({ limit: DEFAULT_TIER_RPM, remaining: DEFAULT_TIER_RPM - 1 - index, dimension: 'account-rpm' });
    }
    expect((await admin(gateway, 'PATCH', '/admin/tiers/default', { rpm: 2 })).status).toBe(200);
    try {
      nextWindow(clock, 1000);
      expectOk(await chatWith(gateway, key, { model: FAST }));
      expectOk(await chatWith(gateway, key, { model: FAST }));
      expectRateLimited(await chatWith(gateway, key, { model: FAST }), 'account-rpm');
    } finally {
      expect((await admin(gateway, 'PATCH', '/admin/tiers/default', { rpm: DEFAULT_TIER_RPM })).status).toBe(200);
    }
    expectOk(await chatWith(gateway, key, { model: FAST }));
  });
});

describe('per-model limits', () => {
  it('limits a model across accounts', async () => {
    const model = 'limits-throttled';
    await addSimulatorModel(gateway, model, undefined, { settings: { output_tokens: 4 } });
    expect((await admin(gateway, 'PATCH', `/admin/models/${model}`, { limits: { rpm: 2 } })).status).toBe(200);
    const a = await seedAccount(gateway);
    const b = await seedAccount(gateway);
    nextWindow(clock, 1000);
    expectOk(await chatWith(gateway, a.key, { model }));
    const second = await chatWith(gateway, b.key, { model });
    expectOk(second);
    expect(rateLimitHeadersOf(second)).toMatchObject({ limit: 2, remaining: 0, dimension: 'model-rpm' });
    expectRateLimited(await chatWith(gateway, a.key, { model }), 'model-rpm');
    expectOk(await chatWith(gateway, a.key, { model: FAST }));
  });
});

describe('headers of the tightest dimension', () => {
  it('describe the dimension with the smallest remaining share, whichever it is', async () => {
    const { key } = await seedAccount(gateway, { key: { rpm: 100, tpm: 10_000 } });
    nextWindow(clock, 1000);
    const light = await chatWith(gateway, key, { model: FAST, maxTokens: 10 });
    expect(rateLimitHeadersOf(light)).toMatchObject({ limit: 100, remaining: 99, dimension: 'key-rpm' });
    const heavy = await chatWith(gateway, key, { model: FAST, maxTokens: 5000 });
    expect(rateLimitHeadersOf(heavy)).toMatchObject({ limit: 10_000, dimension: 'key-tpm' });
  });

  it('are present on every billed answer: with no limit of its own, the account\'s default tier describes the window', async () => {
    const { key } = await seedAccount(gateway);
    const start = nextWindow(clock, 1000);
    const answer = await chatWith(gateway, key, { model: FAST });
    expectOk(answer);
    expect(rateLimitHeadersOf(answer)).toEqual({ limit: DEFAULT_TIER_RPM, remaining: DEFAULT_TIER_RPM - 1, reset: (start + MINUTE) / 1000, dimension: 'account-rpm' });
  });
});

describe('per-IP limit of the public endpoints', () => {
  it('shares one budget across the keyless endpoints and never touches a key', async () => {
    const { key } = await seedAccount(gateway, { key: { rpm: 1 } });
    const start = nextWindow(clock, 20_000);
    const models = await call(gateway.url, 'GET', '/v1/models');
    expect(models.status).toBe(200);
    expect(rateLimitHeadersOf(models)).toEqual({ limit: 3, remaining: 2, reset: (start + MINUTE) / 1000, dimension: 'ip-public' });
    expect((await call(gateway.url, 'GET', '/api/public/announcements')).status).toBe(200);
    expect((await call(gateway.url, 'GET', '/api/fx/latest')).status).not.toBe(429);
    const refused = await call(gateway.url, 'GET', '/v1/models');
    expect(expectRateLimited(refused)).toBe(40);
    expectRateLimited(await call(gateway.url, 'GET', '/api/public/announcements'));
    // A key lists models without the IP limit and without spending its own requests.
    for (let index = 0; index < 3; index += 1) expect((await call(gateway.url, 'GET', '/v1/models', { token: key })).status).toBe(200);
    expectOk(await chatWith(gateway, key, { model: FAST }));
    clock.set(start + MINUTE);
    expect((await call(gateway.url, 'GET', '/v1/models')).status).toBe(200);
  });
});
