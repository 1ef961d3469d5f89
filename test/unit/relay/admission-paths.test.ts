/**
 * Admission answered in the same turn (subscription book, lease and in-process limiter all answering from memory)
 * decides exactly what admission that awaits every authority decides: the same admission and rate-limit headers, the
 * same refusals, the same money held, given back and settled. Two gateways with the same records and the same clock
 * are admitted side by side, one as the gateway runs, the other with every same-turn answer hidden, so it awaits the
 * subscription read, the money hold and the limiter each time. On PostgreSQL when TEST_DATABASE_URL names one.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../../src/billing/ledger.js';
import { NANO_PER_USD } from '../../../src/billing/money.js';
import { SubscriptionBook } from '../../../src/billing/subscription-book.js';
import { openAIFamily } from '../../../src/codecs/openai-chat/family.js';
import type { Model } from '../../../src/domain/model-records.js';
import type { Account, ApiKey } from '../../../src/domain/records.js';
import { GatewayError } from '../../../src/errors/gateway-error.js';
import { InMemoryRateLimiter } from '../../../src/limits/in-memory-rate-limiter.js';
import type { TierLimitsSource } from '../../../src/limits/tier-book.js';
import { admit, type Admission, type AdmissionDependencies, type AdmissionRequest } from '../../../src/relay/admission.js';
import type { RequestMeter } from '../../../src/relay/request-meter.js';
import { NO_IDENTITY } from '../../../src/customers/request-identity.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { newId } from '../../../src/shared/ids.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { SecretBox } from '../../../src/shared/secret-box.js';
import { openStorage } from '../../../src/storage/open-storage.js';
import type { Storage } from '../../../src/storage/storage.js';
import { createThrowawayPostgresDatabase, isPostgresUrl, type ThrowawayPostgresDatabase } from '../../support/postgres-test-database.js';
import { makeAccount, makeApiKey, makePlan, makeSubscription } from '../../storage/fixtures.js';

const T0 = 1_700_000_030_000;
const USD = NANO_PER_USD;
const TIERS: TierLimitsSource = { limitsFor: () => ({ rpm: 100, tpm: 1_000_000 }), generation: 1 };

const MODEL: Model = {
  id: 'paths-model', kind: 'chat', public: true, upstream: null, ownedBy: 'operator', rpm: 50, tpm: null, routingStrategy: 'weighted', cache: null, fallbacks: [], createdAt: 0, updatedAt: 0,
  pricing: {
    inputPerMtokNano: USD, outputPerMtokNano: 2n * USD, cachedInputPerMtokNano: null, cacheWritePerMtokNano: null, perRequestNano: null, perImageNano: null, perAudioMinuteNano: null,
    perMcharNano: null, perWebSearchNano: null, perGroundedPromptNano: null, perWebFetchNano: null, perFileSearchNano: null, perSearchUnitNano: null, batchInputPerMtokNano: null, batchOutputPerMtokNano: null,
  },
};
const DEARER: Model = { ...MODEL, id: 'paths-dearer', pricing: { ...MODEL.pricing, outputPerMtokNano: 3n * USD } };

interface Gateway {
  storage: Storage;
  ledger: Ledger;
  limiter: InMemoryRateLimiter;
  subscriptions: SubscriptionBook;
  dependencies: AdmissionDependencies;
}

/** The authority with its same-turn answer hidden (`hidden()` answers instead): admission then awaits its async call. */
function withoutSameTurn<T extends object>(target: T, member: string, hidden: (() => null) | undefined): T {
  return new Proxy(target, {
    get(object, property) {
      if (property === member) return hidden;
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}

/** A request as the metered frame builds it; the meter only as admission reads it. */
function request(key: ApiKey, account: Account, options: { models?: readonly Model[]; estimatedTokens?: number } = {}): AdmissionRequest {
  const requestId = newId('req');
  const meter = { requestId, modelId: MODEL.id, identity: NO_IDENTITY, createdAt: T0, promptTokensEstimate: 800, observation: null } as unknown as RequestMeter;
  return { key, account, model: MODEL, estimatedTokens: options.estimatedTokens ?? 1_800, fallbackModels: options.models, meter, early: null, family: openAIFamily };
}

/** What must be equal between the two paths (the ledger entry id is each request's own). */
function comparable(admission: Admission) {
  const { entryId: _entryId, ...reservation } = admission.reservation;
  return { model: admission.model.id, reservation, lease: admission.lease === null ? null : 'held', tokenCharges: admission.tokenCharges, rateLimitHeaders: admission.rateLimitHeaders };
}

function refusalOf(thrown: unknown) {
  if (!(thrown instanceof GatewayError)) throw thrown;
  return { code: thrown.code, status: thrown.status, message: thrown.message, headers: thrown.headers, retryAfterSeconds: thrown.retryAfterSeconds };
}

/** Admits on both gateways; `sameTurn`: whether the first must answer with a value rather than a promise. */
async function admitBoth(now: Gateway, waiting: Gateway, make: () => AdmissionRequest, sameTurn: boolean): Promise<{ now: Admission; waiting: Admission } | { refused: ReturnType<typeof refusalOf> }> {
  const asked = make();
  let answered: Admission | Promise<Admission>;
  let nowRefusal: unknown = null;
  try {
    answered = admit(now.dependencies, asked);
  } catch (error) {
    nowRefusal = error;
    answered = Promise.reject(error);
  }
  if (nowRefusal === null) expect(answered instanceof Promise).toBe(!sameTurn);
  else expect(sameTurn).toBe(true);
  const waited = admit(waiting.dependencies, { ...asked, meter: { ...asked.meter, requestId: newId('req') } as RequestMeter });
  expect(waited).toBeInstanceOf(Promise);
  const [first, second] = await Promise.allSettled([answered, waited]);
  if (first.status === 'fulfilled' && second.status === 'fulfilled') {
    expect(comparable(first.value)).toEqual(comparable(second.value));
    return { now: first.value, waiting: second.value };
  }
  expect(first.status).toBe('rejected');
  expect(second.status).toBe('rejected');
  const refused = refusalOf((first as PromiseRejectedResult).reason);
  expect(refused).toEqual(refusalOf((second as PromiseRejectedResult).reason));
  return { refused };
}

describe('admission in the same turn and admission that waits', () => {
  const opened: Array<{ storage: Storage; ledger: Ledger; database: ThrowawayPostgresDatabase | null }> = [];

  afterEach(async () => {
    for (const { storage, ledger, database } of opened.splice(0)) {
      await ledger.close();
      await storage.close();
      await database?.drop();
    }
  });

  async function gateway(clock: ManualClock, records: { account: Account; key: ApiKey; seed: (storage: Storage) => Promise<void> }, waits: boolean): Promise<Gateway> {
    const secretBox = new SecretBox(randomBytes(32));
    const database = isPostgresUrl(process.env.TEST_DATABASE_URL) ? await createThrowawayPostgresDatabase() : null;
    const storage = await openStorage({ url: database?.url ?? 'sqlite::memory:', secretBox });
    await records.seed(storage);
    const ledger = new Ledger(storage, clock, silentLogger, {
      instanceId: `paths-${waits ? 'waiting' : 'now'}`, maxBatch: 64, flushIntervalMs: 60_000, heartbeatMs: 60_000, staleAfterMs: 600_000, checkpointMs: 60_000, factsTtlMs: 60_000,
      lease: { capNano: USD / 2n, scarcityFactor: 64n, shareDivisor: 8n, idleMs: 600_000 },
    });
    opened.push({ storage, ledger, database });
    const limiter = new InMemoryRateLimiter();
    const subscriptions = new SubscriptionBook(storage, clock, { ttlMs: 2000, maxEntries: 100 });
    const dependencies: AdmissionDependencies = waits
      ? { ledger: withoutSameTurn(ledger, 'reserveNow', () => null), limiter: withoutSameTurn(limiter, 'admitNow', undefined), subscriptions: withoutSameTurn(subscriptions, 'activeNow', () => null), clock, tiers: TIERS }
      : { ledger, limiter, subscriptions, clock, tiers: TIERS };
    return { storage, ledger, limiter, subscriptions, dependencies };
  }

  /** Each gateway's money: what its instance holds by pool, and in storage the balance, the key's spend and the plan's use. */
  async function moneyOf(gateway: Gateway, account: Account, key: ApiKey, subscriptionId: string) {
    await gateway.ledger.flush();
    const held = Object.fromEntries([...gateway.ledger.heldPools()].map(([pool, state]) => [pool.replace(/:.*/, ''), state]));
    const stored = await gateway.storage.accounts.getById(account.id);
    const storedKey = await gateway.storage.keys.getById(key.id);
    const subscription = (await gateway.storage.subscriptions.listByAccount(account.id)).find((candidate) => candidate.id === subscriptionId);
    return { held, balanceNano: stored?.balanceNano, keySpentNano: storedKey?.spentNano, subscriptionUsedNano: subscription?.usedNano, overageUsedNano: subscription?.overageUsedNano };
  }

  it('answer alike on a lease miss, a lease hit, a refusal after the hold, a pending subscription read and a rate-window refusal', async () => {
    const clock = new ManualClock(T0);
    const account = makeAccount({ balanceNano: 20n * USD });
    const key = makeApiKey(account.id, { quotaNano: 10n * USD, rpm: 4, tpm: 100_000, concurrency: 2 });
    const plan = makePlan({ quotaNano: 5n * USD, overagePolicy: 'payg', overageLimitNano: null, rpm: 30, tpm: null });
    const subscription = makeSubscription(account.id, plan.id, { usedNano: 0n, startsAt: T0 - 60_000, currentPeriodStart: T0 - 60_000, currentPeriodEnd: T0 + 86_400_000, paidThrough: null });
    const seed = async (storage: Storage) => {
      await storage.accounts.create(account);
      await storage.keys.create(key);
      await storage.plans.create(plan);
      await storage.subscriptions.create(subscription);
    };
    const now = await gateway(clock, { account, key, seed }, false);
    const waiting = await gateway(clock, { account, key, seed }, true);
    const make = (options?: Parameters<typeof request>[2]) => () => request(key, account, options);
    const settleBoth = (admitted: { now: Admission; waiting: Admission }, costNano: bigint) => {
      for (const [gatewayOf, admission] of [[now, admitted.now], [waiting, admitted.waiting]] as const) {
        admission.lease?.release();
        gatewayOf.ledger.settle(admission.reservation, { costNano, requestId: newId('req'), createdAt: clock.now() });
      }
    };
    const sameMoney = async () => expect(await moneyOf(now, account, key, subscription.id)).toEqual(await moneyOf(waiting, account, key, subscription.id));

    // The subscriptions' first read and the first hold wait for storage on both.
    await now.subscriptions.active(account.id);
    await waiting.subscriptions.active(account.id);
    const first = await admitBoth(now, waiting, make(), false);
    if (!('now' in first)) throw new Error('refused');
    expect(first.now.reservation.subscriptionId).toBe(subscription.id);
    await sameMoney();

    // The lease now holds room: the hold, the subscription and the limits all answer in the same turn.
    const second = await admitBoth(now, waiting, make({ models: [DEARER], estimatedTokens: 2_400 }), true);
    if (!('now' in second)) throw new Error('refused');
    expect(second.now.reservation.amountNano).toBeGreaterThan(first.now.reservation.amountNano);
    expect(now.limiter.inUse(`key:${key.id}:concurrency`)).toBe(2);
    expect(waiting.limiter.inUse(`key:${key.id}:concurrency`)).toBe(2);
    await sameMoney();

    // The key's two concurrent requests are in flight: the third is refused after its money was held, which is given back.
    const full = await admitBoth(now, waiting, make(), true);
    expect(full).toEqual({ refused: expect.objectContaining({ code: 'rate_limit_exceeded', message: 'Too many concurrent requests for this API key (limit 2).' }) });
    await sameMoney();

    settleBoth(first, 1_234_567n);
    settleBoth(second, 0n);
    await sameMoney();

    // The subscription book's entry is gone: the read is in flight, so both wait for it.
    now.subscriptions.forget(account.id);
    waiting.subscriptions.forget(account.id);
    const third = await admitBoth(now, waiting, make(), false);
    if (!('now' in third)) throw new Error('refused');
    await sameMoney();

    // The fourth request of the minute is admitted in the same turn; the fifth is refused by the key's window.
    const fourth = await admitBoth(now, waiting, make(), true);
    if (!('now' in fourth)) throw new Error('refused');
    expect(fourth.now.rateLimitHeaders['x-ratelimit-remaining-requests']).toBe('0');
    fourth.now.lease?.release();
    fourth.waiting.lease?.release();
    const fifth = await admitBoth(now, waiting, make(), true);
    expect(fifth).toEqual({ refused: expect.objectContaining({ code: 'rate_limit_exceeded', headers: expect.objectContaining({ 'x-ratelimit-dimension': 'key-rpm' }) }) });
    await sameMoney();

    settleBoth(third, 2_000_000n);
    settleBoth(fourth, 30_000n);
    const money = await moneyOf(now, account, key, subscription.id);
    expect(money.keySpentNano).toBe(1_234_567n + 2_000_000n + 30_000n);
    expect(money.subscriptionUsedNano).toBe(1_234_567n + 2_000_000n + 30_000n);
    await sameMoney();
  });
});
