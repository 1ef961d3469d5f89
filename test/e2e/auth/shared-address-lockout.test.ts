/**
 * A lockout after too many wrong API keys from one address (a NAT, a CI farm: every client behind it shares the
 * address): what the guessing client sends is refused with 429 and no database lookup, while the good keys behind the
 * same address keep working, including a key this instance has never verified; the lockout shows in the metrics and
 * once in the audit log; with Redis the window is shared by every instance.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../../src/auth/api-key-format.js';
import { LOCKOUT_STARTED_ACTION } from '../../../src/auth/lockout-report.js';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../../unit/limits/redis-test-support.js';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { call, type HttpAnswer } from '../admin/helpers.js';

const MODEL = 'lockout-model';
const LIMIT = 5;
const LOCKOUT_ENV = { AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW_SECONDS: '60' };

/** Every secret hash the gateway's storage was asked about, in order. */
function recordLookups(gateway: TestGateway): string[] {
  const lookups: string[] = [];
  const keys = gateway.gateway.services.storage.keys;
  const original = keys.getBySecretHash.bind(keys);
  keys.getBySecretHash = (secretHash) => {
    lookups.push(secretHash);
    return original(secretHash);
  };
  return lookups;
}

const unknownKey = (): string => `sk-${randomBytes(30).toString('base64url').slice(0, 40)}`;
const MALFORMED = 'sk-short';

function chat(gateway: TestGateway, key: string): Promise<HttpAnswer> {
  return call(gateway.url, 'POST', '/v1/chat/completions', { token: key, body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }] } });
}

async function metric(gateway: TestGateway, line: string): Promise<number> {
  const text = (await call(gateway.url, 'GET', '/metrics', { token: gateway.adminToken })).text;
  const found = text.split('\n').find((row) => row.startsWith(`${line} `));
  return found === undefined ? 0 : Number(found.slice(line.length + 1));
}

async function lockoutAudits(gateway: TestGateway): Promise<Array<{ target: string; after: string | null; operatorId: string }>> {
  const page = await gateway.gateway.services.storage.operators.listAudit({ search: LOCKOUT_STARTED_ACTION }, { limit: 100 });
  return page.data;
}

describe('a lockout behind a shared address', () => {
  let gateway: TestGateway;
  let good: SeededAccount;
  let lookups: string[];

  beforeAll(async () => {
    gateway = await startTestGateway({ env: LOCKOUT_ENV });
    await addRoutedModel(gateway, { model: MODEL, channel: { name: 'lockout-sim', type: 'simulator', models: [MODEL] } });
    good = await seedAccount(gateway, { balanceUsd: 5 });
    lookups = recordLookups(gateway);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('refuses the guessing client without a lookup while the good key behind the same address keeps answering 200', async () => {
    expect((await chat(gateway, good.key)).status).toBe(200);
    const wrong = Array.from({ length: LIMIT }, unknownKey);
    for (const key of wrong) expect((await chat(gateway, key)).status).toBe(401);
    for (const key of wrong) expect(lookups).toContain(hashApiKey(key));

    const lookedUpBefore = lookups.length;
    const refused: string[] = [];
    for (let round = 0; round < 10; round += 1) {
      const fresh = unknownKey();
      refused.push(hashApiKey(fresh));
      for (const key of [fresh, MALFORMED, wrong[0] as string]) {
        const answer = await chat(gateway, key);
        expect(answer.status, answer.text).toBe(429);
        expect(answer.body).toMatchObject({ error: { type: 'rate_limit_error', code: 'too_many_failed_attempts' } });
        expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      const honest = await chat(gateway, good.key);
      expect(honest.status, honest.text).toBe(200);
    }
    // Nothing the guesser sent during the lockout reached storage (the good key's own refreshes may have).
    const during = lookups.slice(lookedUpBefore);
    expect(during.filter((hash) => hash !== hashApiKey(good.key))).toEqual([]);
    for (const hash of refused) expect(lookups).not.toContain(hash);

    expect(await metric(gateway, 'unigate_auth_lockouts_total{surface="api-key"}')).toBe(1);
    expect(await metric(gateway, 'unigate_auth_lockout_refusals_total{surface="api-key"}')).toBe(30);
    const audits = await lockoutAudits(gateway);
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ operatorId: 'gateway', target: 'ip:127.0.0.1' });
    expect(JSON.parse(audits[0]?.after ?? '{}')).toMatchObject({ surface: 'api-key', failures: LIMIT, window_seconds: 60 });
  });

  it('looks up an issued key this instance has never verified, during the lockout', async () => {
    expect(gateway.gateway.services.authFailures.refusedFor('api-key', '127.0.0.1', Date.now())).not.toBeNull();
    const other = await seedAccount(gateway, { balanceUsd: 5 });
    const before = lookups.length;
    const answer = await chat(gateway, other.key);
    expect(answer.status, answer.text).toBe(200);
    expect(lookups.slice(before)).toContain(hashApiKey(other.key));
  });

  it('answers a missing key 401 as usual: it costs nothing to refuse', async () => {
    expect((await call(gateway.url, 'POST', '/v1/chat/completions', { body: { model: MODEL, messages: [] } })).body).toMatchObject({ error: { code: 'missing_api_key' } });
  });
});

describe.skipIf(TEST_REDIS_URL === undefined)('a lockout shared by two instances on one Redis', () => {
  const redis = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());
  let a: TestGateway;
  let b: TestGateway;
  let good: SeededAccount;

  beforeAll(async () => {
    // One database, one Redis, one secret key (for the channels' stored credentials).
    const env = { ...LOCKOUT_ENV, REDIS_URL: TEST_REDIS_URL ?? '', REDIS_KEY_PREFIX: redis.prefix, SECRET_KEY: randomBytes(32).toString('hex') };
    a = await startTestGateway({ env });
    b = await startTestGateway({ env: { ...env, DATABASE_URL: a.databaseUrl } });
    await addRoutedModel(a, { model: MODEL, channel: { name: 'lockout-sim', type: 'simulator', models: [MODEL] } });
    good = await seedAccount(a, { balanceUsd: 5 });
    await b.gateway.services.catalog.reload();
  });

  afterAll(async () => {
    await b?.close();
    await a?.close();
    await redis.cleanUp();
  });

  it('locks the address out on the other instance too, and that instance still serves a good key it never saw', async () => {
    const lookupsOnB = recordLookups(b);
    for (let index = 0; index < LIMIT; index += 1) expect((await chat(a, unknownKey())).status).toBe(401);
    expect((await chat(a, unknownKey())).status).toBe(429);

    const fresh = unknownKey();
    for (const key of [fresh, MALFORMED]) {
      const answer = await chat(b, key);
      expect(answer.status, answer.text).toBe(429);
      expect(answer.body).toMatchObject({ error: { code: 'too_many_failed_attempts' } });
    }
    expect(lookupsOnB).not.toContain(hashApiKey(fresh));
    const honest = await chat(b, good.key);
    expect(honest.status, honest.text).toBe(200);
    expect(lookupsOnB).toEqual([hashApiKey(good.key)]);

    // Started once, on the instance whose failure reached the limit; reported once.
    expect(await metric(a, 'unigate_auth_lockouts_total{surface="api-key"}')).toBe(1);
    expect(await metric(b, 'unigate_auth_lockouts_total{surface="api-key"}')).toBe(0);
    expect(await metric(b, 'unigate_auth_lockout_refusals_total{surface="api-key"}')).toBe(2);
    expect(await lockoutAudits(a)).toHaveLength(1);
  });
});
