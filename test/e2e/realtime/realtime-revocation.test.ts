/**
 * A live session's caller is checked again before each response, as every HTTP request is: a key revoked, expired or
 * disabled, an account disabled, or a model taken off the key's allowlist while an OpenAI Realtime or Gemini Live
 * session is open ends the session at its next response with the protocol's refusal (OpenAI's `error` event with the
 * HTTP answer's error object, Gemini's close reason) and close code 1008. The refused response reaches no upstream and
 * is billed nothing; the responses before it stay billed. Two gateways on one database and one Redis: a key revoked
 * through one stops a session open on the other.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../src/shared/clock.js';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { TEST_REDIS_URL, testKeyPrefix, RedisFixture } from '../../unit/limits/redis-test-support.js';
import { balanceNano, MODEL, newAccount, openRaw, responseCostNano, startRealtimeSetup, usageRows, type RealtimeSetup } from './realtime-support.js';
import { LIVE_MODEL, sdkLive, startLiveSetup, turnCostNano, type LiveSetup } from './gemini-live-support.js';

const clock = new ManualClock(Date.now());
let setup: RealtimeSetup;
let live: LiveSetup;

beforeAll(async () => {
  setup = await startRealtimeSetup({}, {}, 1, clock);
  live = await startLiveSetup({}, {}, 1, clock);
});

afterAll(async () => {
  await setup?.close();
  await live?.close();
});

/** The admin change that takes a key's standing away, made on `gateway` once `account` has been served. */
type Change = (gateway: TestGateway, account: { accountId: string; keyId: string }) => Promise<void>;

async function changed(answer: Promise<{ status: number; body: unknown }>): Promise<void> {
  const { status, body } = await answer;
  if (status !== 200) throw new Error(JSON.stringify(body));
}

const CHANGES: Array<[string, () => Record<string, unknown>, Change, { type: string; code: string }]> = [
  ['revoked', () => ({}), (gateway, { keyId }) => changed(gateway.admin('PATCH', `/admin/keys/${keyId}`, { status: 'revoked' })), { type: 'authentication_error', code: 'revoked_api_key' }],
  ['disabled', () => ({}), (gateway, { keyId }) => changed(gateway.admin('PATCH', `/admin/keys/${keyId}`, { status: 'disabled' })), { type: 'permission_error', code: 'key_disabled' }],
  ['of a disabled account', () => ({}), (gateway, { accountId }) => changed(gateway.admin('PATCH', `/admin/accounts/${accountId}`, { status: 'disabled' })), { type: 'permission_error', code: 'account_disabled' }],
  ['no longer allowed the model', () => ({}), (gateway, { keyId }) => changed(gateway.admin('PATCH', `/admin/keys/${keyId}`, { allowed_models: ['some-other-model'] })), { type: 'permission_error', code: 'model_not_allowed' }],
  // By the date alone: nothing is invalidated, the key's cached expiry is read against the clock.
  ['expired', () => ({ expires_at: Math.floor(clock.now() / 1000) + 3600 }), async () => clock.advance(3600 * 1000), { type: 'authentication_error', code: 'expired_api_key' }],
];

describe('an OpenAI Realtime session whose key loses its standing', () => {
  it.each(CHANGES)('ends at its next response when the key is %s: the error event, close 1008, the refused response neither sent upstream nor billed', async (_what, attributes, change, refusal) => {
    const account = await newAccount(setup, 20, attributes());
    const before = await balanceNano(setup, account);
    const session = await openRaw(setup.url, { key: account.key });
    const usagesBefore = setup.upstream.usages.length;
    for (let index = 0; index < 2; index += 1) {
      session.send({ type: 'response.create' });
      await session.next('response.done');
    }
    await change(setup.gateway, account);
    session.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Once more.' }] } });
    session.send({ type: 'response.create' });
    const error = await session.next('error');
    expect(error).toMatchObject({ type: 'error', error: { ...refusal, param: null } });
    expect((await session.closed).code).toBe(1008);
    // Neither the refused response nor anything sent after the change reached the upstream.
    const usages = setup.upstream.usages.slice(usagesBefore);
    expect(usages).toHaveLength(2);
    const rows = await usageRows(setup, account);
    expect(rows.map((row) => row.error_code)).toEqual([null, null]);
    const [first, second] = usages;
    if (first === undefined || second === undefined) throw new Error('no usage');
    expect(before - (await balanceNano(setup, account))).toBe(responseCostNano(first) + responseCostNano(second));
  });
});

describe('a session opened with a client secret', () => {
  it('ends at its next response when the key that minted the secret is revoked', async () => {
    const account = await newAccount(setup);
    const minted = await fetch(`${setup.gateway.baseURL}/realtime/client_secrets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session: { type: 'realtime', model: MODEL } }),
    });
    const { value } = (await minted.json()) as { value: string };
    const session = await openRaw(setup.url, { protocols: ['realtime', `openai-insecure-api-key.${value}`] });
    session.send({ type: 'response.create' });
    await session.next('response.done');
    expect((await setup.gateway.admin('PATCH', `/admin/keys/${account.keyId}`, { status: 'revoked' })).status).toBe(200);
    session.send({ type: 'response.create' });
    expect(await session.next('error')).toMatchObject({ error: { type: 'authentication_error', code: 'revoked_api_key' } });
    expect((await session.closed).code).toBe(1008);
    expect(await usageRows(setup, account)).toHaveLength(1);
  });
});

describe('the check before each response', () => {
  it('reads no storage while the key is cached: responses and frames after the first look nothing up', async () => {
    const account = await newAccount(setup);
    const session = await openRaw(setup.url, { key: account.key });
    session.send({ type: 'response.create' });
    await session.next('response.done');
    const { storage } = setup.gateway.gateway.services;
    const lookups = [vi.spyOn(storage.keys, 'getBySecretHash'), vi.spyOn(storage.keys, 'getById'), vi.spyOn(storage.accounts, 'getById'), vi.spyOn(storage.projects, 'getById')];
    try {
      for (let index = 0; index < 3; index += 1) {
        session.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Again.' }] } });
        session.send({ type: 'response.create' });
        await session.next('response.done');
      }
      expect(lookups.map((lookup) => lookup.mock.calls.length)).toEqual([0, 0, 0, 0]);
      // Once the key is dropped from the cache (as an admin change drops it), the next check reads it once.
      await setup.gateway.gateway.services.keys.invalidateKey(account.keyId);
      session.send({ type: 'response.create' });
      await session.next('response.done');
      expect(lookups.map((lookup) => lookup.mock.calls.length)).toEqual([1, 0, 1, 0]);
    } finally {
      for (const lookup of lookups) lookup.mockRestore();
    }
    session.socket.close();
    await session.closed;
    expect(await usageRows(setup, account)).toHaveLength(5);
  });
});

describe('a Gemini Live session whose key loses its standing', () => {
  it.each(CHANGES)('ends at its next turn when the key is %s: close 1008 with the reason, the refused turn neither sent upstream nor billed', async (_what, attributes, change, refusal) => {
    const account = await newAccount(live, 20, attributes());
    const before = await balanceNano(live, account);
    const session = await sdkLive(live.gateway.url, account.key, LIVE_MODEL);
    const usagesBefore = live.upstream.usages.length;
    session.session.sendClientContent({ turns: 'One.', turnComplete: true });
    await session.waitForUsage(1);
    await change(live.gateway, account);
    session.session.sendClientContent({ turns: 'Two.', turnComplete: true });
    const close = await session.closed;
    expect(close.code).toBe(1008);
    expect(close.reason).toContain(MESSAGES[refusal.code]);
    const usages = live.upstream.usages.slice(usagesBefore);
    expect(usages).toHaveLength(1);
    const rows = await usageRows(live, account);
    expect(rows).toHaveLength(1);
    const [first] = usages;
    if (first === undefined) throw new Error('no usage');
    expect(before - (await balanceNano(live, account))).toBe(turnCostNano(first));
  });
});

/** How the HTTP refusal of each code begins: the close reason is that message. */
const MESSAGES: Record<string, string> = {
  revoked_api_key: 'The API key has been revoked.',
  key_disabled: 'The API key is disabled.',
  account_disabled: 'The account this API key belongs to is disabled.',
  model_not_allowed: 'This API key is not allowed to use model',
  expired_api_key: 'The API key has expired.',
};

describe.skipIf(TEST_REDIS_URL === undefined)('two gateways on one database and one Redis', () => {
  const redis = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());
  let pair: RealtimeSetup;
  let other: TestGateway;

  beforeAll(async () => {
    // Gateways on one database share the key that encrypts upstream credentials.
    const env = { REDIS_URL: TEST_REDIS_URL ?? '', REDIS_KEY_PREFIX: redis.prefix, SECRET_KEY: randomBytes(32).toString('hex') };
    pair = await startRealtimeSetup(env);
    other = await startTestGateway({ env: { ...env, DATABASE_URL: pair.gateway.databaseUrl } });
  });

  afterAll(async () => {
    await other?.close();
    await pair?.close();
    await redis.cleanUp();
  });

  it('a key revoked through one ends its session on the other at the next response', async () => {
    const account = await newAccount(pair);
    const session = await openRaw(pair.url, { key: account.key });
    session.send({ type: 'response.create' });
    await session.next('response.done');
    // The key is cached on the session's gateway now: only the invalidation pushed through Redis can drop it.
    expect((await other.admin('PATCH', `/admin/keys/${account.keyId}`, { status: 'revoked' })).status).toBe(200);
    session.send({ type: 'response.create' });
    expect(await session.next('error')).toMatchObject({ error: { type: 'authentication_error', code: 'revoked_api_key' } });
    expect((await session.closed).code).toBe(1008);
    expect(await usageRows(pair, account)).toHaveLength(1);
  });
});

