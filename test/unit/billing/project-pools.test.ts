import { describe, expect, it } from 'vitest';
import { planBatch, type LeasePolicy } from '../../../src/billing/money-batch.js';
import type { GrowRequest } from '../../../src/billing/batch-growing.js';
import { poolsOf, type Reservation } from '../../../src/billing/money-pools.js';
import type { KeyBudget } from '../../../src/domain/records.js';
import type { MoneySnapshot } from '../../../src/storage/storage.js';

const DAY = 86_400_000;
const NOW = 10 * DAY + 5;
const NO_LEASE: LeasePolicy = { capNano: 0n, scarcityFactor: 64n, shareDivisor: 8n, idleMs: 2000 };
const PROJECT = { id: 'prj', capped: true, budgeted: true };

function snapshot(project: { quotaNano: bigint | null; spentNano: bigint; budget: KeyBudget | null }, held: Record<string, bigint> = {}): MoneySnapshot {
  return {
    accounts: new Map([['acct', { balanceNano: 1000n, creditLineNano: 0n }]]),
    keys: new Map([['key', { accountId: 'acct', quotaNano: null, spentNano: 0n, budget: null }]]),
    subscriptions: new Map(),
    projects: new Map([['prj', { accountId: 'acct', ...project }]]),
    heldByPool: new Map(Object.entries(held)),
  };
}

let sequence = 0;
function grow(amountNano: bigint, options: Partial<GrowRequest> = {}): GrowRequest {
  sequence += 1;
  return { entryId: `led_${sequence}`, accountId: 'acct', keyId: 'key', keyCapped: false, keyBudgeted: false, candidateSubscriptions: [], amountNano, project: PROJECT, ...options };
}

function reserved(outcome: ReturnType<typeof planBatch>['outcomes'][number] | undefined): Reservation {
  if (outcome === undefined || !('reservation' in outcome)) throw new Error(`not reserved: ${JSON.stringify(outcome)}`);
  return outcome.reservation;
}

describe('project pools', () => {
  const budget: KeyBudget = { period: 'day', limitNano: 100n, spentNano: 50n, periodStart: 10 * DAY };

  it('hold a project\'s budget all or nothing, counting other instances\' holds, and name the project in the refusal', () => {
    const plan = planBatch({ now: NOW, snapshot: snapshot({ quotaNano: null, spentNano: 0n, budget }, { 'pbudget:prj': 30n }), pools: new Map(), grows: [grow(30n, { project: { id: 'prj', capped: false, budgeted: true } }), grow(20n, { project: { id: 'prj', capped: false, budgeted: true } })], settlements: [], lease: NO_LEASE });
    expect(plan.outcomes[0]).toEqual({ refused: 'quota_exhausted', pool: 'projectBudget', remainingNano: 20n, retryAfterMs: 11 * DAY - NOW });
    const reservation = reserved(plan.outcomes[1]);
    expect(poolsOf(reservation)).toEqual([['wallet:acct', 20n], ['pbudget:prj', 20n]]);
    expect(plan.pools.get('pbudget:prj')).toMatchObject({ held: 20n, inFlight: 20n });
  });

  it('refuse by the project\'s cap before its budget, and a budget of an earlier period counts from zero (rolled over)', () => {
    const earlier: KeyBudget = { ...budget, periodStart: 9 * DAY };
    const plan = planBatch({ now: NOW, snapshot: snapshot({ quotaNano: 40n, spentNano: 30n, budget: earlier }), pools: new Map(), grows: [grow(11n), grow(10n)], settlements: [], lease: NO_LEASE });
    expect(plan.outcomes[0]).toEqual({ refused: 'quota_exhausted', pool: 'project', remainingNano: 10n });
    expect(reserved(plan.outcomes[1]).parts).toMatchObject({ project: 10n, projectBudget: 10n, wallet: 10n });
    expect(plan.projectBudgetRollovers).toEqual([{ projectId: 'prj', periodStart: 10 * DAY }]);
  });

  it('settle a charge to the project (its spend grows) and never beyond what is left of its pools', () => {
    const first = planBatch({ now: NOW, snapshot: snapshot({ quotaNano: 100n, spentNano: 0n, budget: null }), pools: new Map(), grows: [grow(60n, { project: { id: 'prj', capped: true, budgeted: false } })], settlements: [], lease: NO_LEASE });
    const reservation = reserved(first.outcomes[0]);
    // Meanwhile the project's cap was lowered to 50 with 20 spent: 30 are left, the rest of the cost is a shortfall.
    const second = planBatch({ now: NOW, snapshot: snapshot({ quotaNano: 50n, spentNano: 20n, budget: null }, { 'project:prj': 60n, 'wallet:acct': 60n }), pools: first.pools, grows: [], settlements: [{ reservation, costNano: 45n, requestId: 'req', createdAt: NOW }], lease: NO_LEASE });
    expect(second.usages).toEqual([expect.objectContaining({ projectId: 'prj', walletNano: 30n, shortfallNano: 15n })]);
    expect(second.pools.get('project:prj')).toMatchObject({ inFlight: 0n, held: 0n });
  });

  it('take no project pool for a key of the default project', () => {
    const plan = planBatch({ now: NOW, snapshot: snapshot({ quotaNano: 0n, spentNano: 0n, budget: null }), pools: new Map(), grows: [grow(10n, { project: null })], settlements: [], lease: NO_LEASE });
    expect(poolsOf(reserved(plan.outcomes[0]))).toEqual([['wallet:acct', 10n]]);
  });
});
