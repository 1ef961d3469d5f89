import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planBatch, type LeasePolicy } from '../../../src/billing/money-batch.js';
import type { GrowRequest } from '../../../src/billing/batch-growing.js';
import type { Settlement } from '../../../src/billing/batch-settling.js';
import type { PoolState, Reservation } from '../../../src/billing/money-pools.js';
import type { KeyBudget, OveragePolicy, Plan, Subscription } from '../../../src/domain/records.js';
import type { MoneySnapshot } from '../../../src/storage/storage.js';

const DAY = 86_400_000;
const NOW = 10 * DAY + 5;
const NO_LEASE: LeasePolicy = { capNano: 0n, scarcityFactor: 64n, shareDivisor: 8n, idleMs: 2000 };

function plan(policy: OveragePolicy, quotaNano: bigint, overageLimitNano: bigint | null = null): Plan {
  return { id: 'plan', name: 'p', period: 'day', quotaNano, overagePolicy: policy, overageLimitNano, rpm: null, tpm: null, selfService: false, priceNano: 0n, createdAt: 0, updatedAt: 0 };
}

function subscription(overrides: Partial<Subscription> = {}): Subscription {
  return {
    id: 'sub', accountId: 'acct', planId: 'plan', status: 'active', startsAt: 0, currentPeriodStart: 10 * DAY, currentPeriodEnd: 11 * DAY,
    usedNano: 0n, overageUsedNano: 0n, cancelAt: null, paidThrough: null, renews: false, createdAt: 0, updatedAt: 0, ...overrides,
  };
}

function snapshot(
  balanceNano: bigint,
  options: { quotaNano?: bigint | null; spentNano?: bigint; budget?: KeyBudget; sub?: { subscription: Subscription; plan: Plan }; held?: Record<string, bigint> } = {},
): MoneySnapshot {
  return {
    accounts: new Map([['acct', { balanceNano, creditLineNano: 0n }]]),
    keys: new Map([['key', { accountId: 'acct', quotaNano: options.quotaNano ?? null, spentNano: options.spentNano ?? 0n, budget: options.budget ?? null }]]),
    subscriptions: options.sub === undefined ? new Map() : new Map([['sub', options.sub]]),
    heldByPool: new Map(Object.entries(options.held ?? {})),
  };
}

let sequence = 0;
function grow(amountNano: bigint, options: Partial<GrowRequest> = {}): GrowRequest {
  sequence += 1;
  return { entryId: `led_${sequence}`, accountId: 'acct', keyId: 'key', keyCapped: false, keyBudgeted: false, candidateSubscriptions: [], amountNano, ...options };
}

function settle(reservation: Reservation, costNano: bigint): Settlement {
  return { reservation, costNano, requestId: `req_${reservation.entryId}`, createdAt: NOW };
}

function reserved(outcome: ReturnType<typeof planBatch>['outcomes'][number] | undefined): Reservation {
  if (outcome === undefined || !('reservation' in outcome)) throw new Error(`not reserved: ${JSON.stringify(outcome)}`);
  return outcome.reservation;
}

describe('planBatch', () => {
  it('makes a holder\'s hold apart from the instance\'s pools, counted against every other reservation', () => {
    const made = planBatch({ now: NOW, snapshot: snapshot(100n), pools: new Map(), grows: [grow(70n, { holder: 'batch:b1', keyCapped: true }), grow(40n)], settlements: [], lease: NO_LEASE });
    expect(reserved(made.outcomes[0])).toMatchObject({ holder: 'batch:b1', amountNano: 70n });
    // The 30 left cannot cover 40 while the batch holds 70.
    expect(made.outcomes[1]).toEqual({ refused: 'insufficient_balance' });
    // One row a pool the reservation takes part in: the wallet and the key's cap.
    expect(made.holderGrants).toEqual([
      { holder: 'batch:b1', pool: 'wallet:acct', accountId: 'acct', heldNano: 70n },
      { holder: 'batch:b1', pool: 'key:key', accountId: 'acct', heldNano: 70n },
    ]);
    expect(made.pools.get('wallet:acct')?.inFlight ?? 0n).toBe(0n);
  });

  it('charges a settlement against its holder\'s hold, which keeps exactly what the charge did not take', () => {
    const line: Reservation = {
      entryId: 'led_line', accountId: 'acct', keyId: 'key', keyCapped: false, keyBudgeted: false, subscriptionId: null, candidateSubscriptions: [], amountNano: 0n,
      parts: { wallet: 0n, subscription: 0n, overage: 0n, key: 0n, budget: 0n }, holder: 'batch:b1',
    };
    // The batch holds all 100 of the balance: the line's 35 comes out of the hold, not a shortfall.
    const state: MoneySnapshot = { ...snapshot(100n, { held: { 'wallet:acct': 100n } }), holderHolds: new Map([['batch:b1', new Map([['wallet:acct', 100n]])]]) };
    const charged = planBatch({ now: NOW, snapshot: state, pools: new Map(), grows: [grow(1n)], settlements: [settle(line, 35n)], lease: NO_LEASE });
    expect(charged.usages[0]).toMatchObject({ walletNano: 35n, shortfallNano: 0n });
    expect(charged.holderTakes).toEqual([{ entryId: 'led_line', holder: 'batch:b1', pool: 'wallet:acct', takenNano: 35n }]);
    // The 65 the batch keeps is still out of reach of an interactive request.
    expect(charged.outcomes[0]).toEqual({ refused: 'insufficient_balance' });
    // A hold already released: the charge takes from the free funds (never past them) and touches no hold.
    const released = planBatch({ now: NOW, snapshot: snapshot(20n), pools: new Map(), grows: [], settlements: [settle(line, 35n)], lease: NO_LEASE });
    expect(released.usages[0]).toMatchObject({ walletNano: 20n, shortfallNano: 15n });
    expect(released.holderTakes).toEqual([]);
  });

  it('holds all or nothing from the wallet and refuses what does not fit', () => {
    const plan1 = planBatch({ now: NOW, snapshot: snapshot(100n), pools: new Map(), grows: [grow(60n), grow(50n), grow(40n)], settlements: [], lease: NO_LEASE });
    expect(plan1.outcomes.map((outcome) => ('refused' in outcome ? outcome.refused : 'ok'))).toEqual(['ok', 'insufficient_balance', 'ok']);
    expect(plan1.pools.get('wallet:acct')).toMatchObject({ held: 100n, inFlight: 100n });
  });

  it('counts other instances\' holds and settles an overrun only up to the funds, recording the shortfall', () => {
    const first = planBatch({ now: NOW, snapshot: snapshot(100n, { held: { 'wallet:acct': 70n } }), pools: new Map(), grows: [grow(40n), grow(30n)], settlements: [], lease: NO_LEASE });
    expect(first.outcomes[0]).toEqual({ refused: 'insufficient_balance' });
    const reservation = reserved(first.outcomes[1]);
    const pools = first.pools;
    // The model wrote more than estimated: 45 costs, only the 30 held is free (the rest is held by others).
    const second = planBatch({ now: NOW, snapshot: snapshot(100n, { held: { 'wallet:acct': 100n } }), pools, grows: [], settlements: [settle(reservation, 45n)], lease: NO_LEASE });
    expect(second.usages[0]).toMatchObject({ walletNano: 30n, shortfallNano: 15n, subscriptionNano: 0n });
    expect(second.pools.get('wallet:acct')).toMatchObject({ held: 0n, inFlight: 0n });
  });

  it('takes a lease only when funds are plentiful, and at most a share of them', () => {
    const lease: LeasePolicy = { capNano: 1_000n, scarcityFactor: 64n, shareDivisor: 8n, idleMs: 2000 };
    const rich = planBatch({ now: NOW, snapshot: snapshot(100_000n), pools: new Map(), grows: [grow(10n)], settlements: [], lease });
    expect(rich.pools.get('wallet:acct')).toMatchObject({ inFlight: 10n, held: 1_010n });
    const scarce = planBatch({ now: NOW, snapshot: snapshot(500n), pools: new Map(), grows: [grow(10n)], settlements: [], lease });
    expect(scarce.pools.get('wallet:acct')).toMatchObject({ inFlight: 10n, held: 10n });
    const idle: PoolState = { accountId: 'acct', held: 1_000n, inFlight: 0n, lastUsedAt: NOW - 5000, unit: 10n };
    const returned = planBatch({ now: NOW, snapshot: snapshot(100_000n, { held: { 'wallet:acct': 1_000n } }), pools: new Map([['wallet:acct', idle]]), grows: [], settlements: [], lease });
    expect(returned.pools.get('wallet:acct')?.held).toBe(0n);
  });

  it('a busy pool leases enough for many of its reservations, up to the ceiling, never beyond its share of the free funds', () => {
    const lease: LeasePolicy = { capNano: 1_000n, unitsAhead: 256n, ceilingNano: 50_000n, scarcityFactor: 64n, shareDivisor: 8n, idleMs: 2000 };
    // 256 reservations of 10 (2,560) are more than the fixed cap (1,000).
    const rich = planBatch({ now: NOW, snapshot: snapshot(10_000_000n), pools: new Map(), grows: [grow(10n)], settlements: [], lease });
    expect(rich.pools.get('wallet:acct')).toMatchObject({ inFlight: 10n, held: 10n + 2_560n });
    // 256 reservations of 1,000 stop at the ceiling.
    const large = planBatch({ now: NOW, snapshot: snapshot(10_000_000n), pools: new Map(), grows: [grow(1_000n)], settlements: [], lease });
    expect(large.pools.get('wallet:acct')).toMatchObject({ inFlight: 1_000n, held: 1_000n + 50_000n });
    // The share of the free funds still bounds it: 1/8 of (100,000 - 10).
    const shared = planBatch({ now: NOW, snapshot: snapshot(100_000n), pools: new Map(), grows: [grow(100n)], settlements: [], lease });
    expect(shared.pools.get('wallet:acct')).toMatchObject({ inFlight: 100n, held: 100n + (100_000n - 100n) / 8n });
    // Small reservations keep the fixed cap.
    const small = planBatch({ now: NOW, snapshot: snapshot(10_000_000n), pools: new Map(), grows: [grow(2n)], settlements: [], lease });
    expect(small.pools.get('wallet:acct')).toMatchObject({ inFlight: 2n, held: 2n + 1_000n });
  });

  it('the key cap is a pool of its own: the upper bound must fit under it (429 quota_exhausted)', () => {
    const result = planBatch({ now: NOW, snapshot: snapshot(10_000n, { quotaNano: 100n, spentNano: 80n }), pools: new Map(), grows: [grow(30n, { keyCapped: true }), grow(20n, { keyCapped: true })], settlements: [], lease: NO_LEASE });
    expect(result.outcomes[0]).toEqual({ refused: 'quota_exhausted', pool: 'key', remainingNano: 20n });
    expect(reserved(result.outcomes[1]).parts).toMatchObject({ key: 20n, wallet: 20n });
  });

  it('a key budget is a pool of its own: refused until the period ends, with the wait until then', () => {
    const budget: KeyBudget = { period: 'day', limitNano: 100n, spentNano: 80n, periodStart: 10 * DAY };
    const result = planBatch({
      now: NOW, snapshot: snapshot(10_000n, { budget }), pools: new Map(), grows: [grow(30n, { keyBudgeted: true }), grow(20n, { keyBudgeted: true })], settlements: [], lease: NO_LEASE,
    });
    expect(result.outcomes[0]).toEqual({ refused: 'quota_exhausted', pool: 'budget', remainingNano: 20n, retryAfterMs: 11 * DAY - NOW });
    expect(reserved(result.outcomes[1]).parts).toMatchObject({ budget: 20n, wallet: 20n });
    expect(result.budgetRollovers).toEqual([]);
  });

  it('a key budget of an earlier period starts again from zero, and the rollover is written', () => {
    const budget: KeyBudget = { period: 'day', limitNano: 100n, spentNano: 100n, periodStart: 9 * DAY };
    const result = planBatch({ now: NOW, snapshot: snapshot(10_000n, { budget }), pools: new Map(), grows: [grow(100n, { keyBudgeted: true })], settlements: [], lease: NO_LEASE });
    expect(reserved(result.outcomes[0]).parts.budget).toBe(100n);
    expect(result.budgetRollovers).toEqual([{ keyId: 'key', periodStart: 10 * DAY }]);
  });

  it('a settlement never charges a budget beyond what is left of it', () => {
    const budget: KeyBudget = { period: 'day', limitNano: 100n, spentNano: 90n, periodStart: 10 * DAY };
    const first = planBatch({ now: NOW, snapshot: snapshot(10_000n, { budget }), pools: new Map(), grows: [grow(10n, { keyBudgeted: true })], settlements: [], lease: NO_LEASE });
    const reservation = reserved(first.outcomes[0]);
    const result = planBatch({ now: NOW, snapshot: snapshot(10_000n, { budget, held: { 'budget:key': 10n, 'wallet:acct': 10n } }), pools: first.pools, grows: [], settlements: [settle(reservation, 25n)], lease: NO_LEASE });
    expect(result.usages[0]).toMatchObject({ walletNano: 10n, shortfallNano: 15n });
  });

  it.each([
    ['deny', null, { refused: 'quota_exhausted', resetsInMs: 11 * DAY - NOW }],
    ['limit', 25n, { refused: 'quota_exhausted', resetsInMs: 11 * DAY - NOW }],
    ['limit', 100n, { parts: { subscription: 20n, wallet: 30n, overage: 30n } }],
    ['payg', null, { parts: { subscription: 20n, wallet: 30n, overage: 0n } }],
  ] as const)('subscription quota first, then overage policy %s (limit %s)', (policy, limit, expected) => {
    const sub = { subscription: subscription({ usedNano: 80n }), plan: plan(policy, 100n, limit) };
    const result = planBatch({ now: NOW, snapshot: snapshot(10_000n, { sub }), pools: new Map(), grows: [grow(50n, { candidateSubscriptions: ['sub'] })], settlements: [], lease: NO_LEASE });
    const outcome = result.outcomes[0];
    if ('refused' in expected) expect(outcome).toEqual(expected);
    else expect(reserved(outcome).parts).toMatchObject(expected.parts);
  });

  it('rolls the period over at its end and settles into the new period', () => {
    const sub = { subscription: subscription({ usedNano: 100n, currentPeriodStart: 9 * DAY, currentPeriodEnd: 10 * DAY }), plan: plan('deny', 100n) };
    const result = planBatch({ now: NOW, snapshot: snapshot(0n, { sub }), pools: new Map(), grows: [grow(60n, { candidateSubscriptions: ['sub'] })], settlements: [], lease: NO_LEASE });
    expect(result.rollovers).toEqual([{ id: 'sub', status: 'active', currentPeriodStart: 10 * DAY, currentPeriodEnd: 11 * DAY, resetUsage: true }]);
    const reservation = reserved(result.outcomes[0]);
    expect(reservation.parts.subscription).toBe(60n);
    const settled = planBatch({ now: NOW, snapshot: snapshot(0n, { sub: { ...sub, subscription: { ...sub.subscription, usedNano: 0n, currentPeriodStart: 10 * DAY, currentPeriodEnd: 11 * DAY } }, held: { 'sub:sub': 60n } }), pools: result.pools, grows: [], settlements: [settle(reservation, 40n)], lease: NO_LEASE });
    expect(settled.usages[0]).toMatchObject({ subscriptionId: 'sub', subscriptionNano: 40n, walletNano: 0n, periodStart: 10 * DAY, shortfallNano: 0n });
  });

  it('a cancellation that came due stops the subscription: the wallet pays', () => {
    const sub = { subscription: subscription({ cancelAt: NOW - 1 }), plan: plan('deny', 100n) };
    const result = planBatch({ now: NOW, snapshot: snapshot(1_000n, { sub }), pools: new Map(), grows: [grow(50n, { candidateSubscriptions: ['sub'] })], settlements: [], lease: NO_LEASE });
    expect(result.rollovers[0]).toMatchObject({ status: 'cancelled', resetUsage: false });
    expect(reserved(result.outcomes[0]).parts).toMatchObject({ wallet: 50n, subscription: 0n });
  });

  it('property: whatever the sequence, no pool is held or charged beyond its funds, and every charge is at most its cost', () => {
    fc.assert(fc.property(
      fc.bigInt({ min: 0n, max: 2_000n }),
      fc.array(fc.tuple(fc.bigInt({ min: 1n, max: 400n }), fc.bigInt({ min: 0n, max: 600n }), fc.boolean()), { minLength: 1, maxLength: 40 }),
      (funds, requests) => {
        let balance = funds;
        let pools = new Map<string, PoolState>();
        let held = 0n;
        const open: Array<{ reservation: Reservation; cost: bigint }> = [];
        let charged = 0n;
        for (const [amount, cost, settleNow] of requests) {
          const settlements = settleNow ? open.splice(0).map(({ reservation, cost: price }) => settle(reservation, price)) : [];
          const plan1 = planBatch({ now: NOW, snapshot: snapshot(balance, { held: { 'wallet:acct': held } }), pools, grows: [grow(amount)], settlements, lease: { capNano: 300n, scarcityFactor: 2n, shareDivisor: 4n, idleMs: 2000 } });
          for (const usage of plan1.usages) {
            expect(usage.walletNano + usage.shortfallNano).toBe(settlements.find((item) => item.reservation.entryId === usage.entryId)?.costNano);
            balance -= usage.walletNano;
            charged += usage.walletNano;
          }
          pools = new Map([...pools, ...plan1.pools]);
          held = pools.get('wallet:acct')?.held ?? 0n;
          expect(balance).toBeGreaterThanOrEqual(0n);
          expect(held).toBeLessThanOrEqual(balance);
          const outcome = plan1.outcomes[0];
          if (outcome !== undefined && 'reservation' in outcome) open.push({ reservation: outcome.reservation, cost });
        }
        expect(charged).toBeLessThanOrEqual(funds);
      },
    ), { numRuns: 300 });
  });
  it('a probe is answered like a reservation and holds nothing (the early refusal of a caller who cannot pay)', () => {
    const probe = (amountNano: bigint, options: Partial<GrowRequest> = {}): GrowRequest => grow(amountNano, { probe: true, ...options });
    const outcomes = (balanceNano: bigint, options: Parameters<typeof snapshot>[1], grows: GrowRequest[]) =>
      planBatch({ now: NOW, snapshot: snapshot(balanceNano, options), pools: new Map(), grows, settlements: [], lease: NO_LEASE });
    const funded = outcomes(1n, {}, [probe(1n), grow(1n)]);
    expect(funded.outcomes.map((outcome) => ('refused' in outcome ? outcome.refused : 'ok'))).toEqual(['ok', 'ok']);
    // The probe took nothing: the reservation after it still found the single nano-dollar.
    expect(funded.pools.get('wallet:acct')).toMatchObject({ inFlight: 1n, held: 1n });
    expect(outcomes(0n, {}, [probe(1n)]).outcomes[0]).toEqual({ refused: 'insufficient_balance' });
    expect(outcomes(0n, { held: { 'wallet:acct': 0n } }, [probe(1n)]).pools.get('wallet:acct')).toMatchObject({ inFlight: 0n, held: 0n });
    expect(outcomes(10_000n, { quotaNano: 100n, spentNano: 100n }, [probe(1n, { keyCapped: true })]).outcomes[0]).toEqual({ refused: 'quota_exhausted', pool: 'key', remainingNano: 0n });
    const spentSubscription = { subscription: subscription({ usedNano: 500n }), plan: plan('deny', 500n) };
    expect(outcomes(10_000n, { sub: spentSubscription }, [probe(1n, { candidateSubscriptions: ['sub'] })]).outcomes[0]).toEqual({ refused: 'quota_exhausted', resetsInMs: 11 * DAY - NOW });
    const quotaLeft = { subscription: subscription({ usedNano: 499n }), plan: plan('deny', 500n) };
    expect(reserved(outcomes(0n, { sub: quotaLeft }, [probe(1n, { candidateSubscriptions: ['sub'] })]).outcomes[0]).parts.subscription).toBe(1n);
  });
});
