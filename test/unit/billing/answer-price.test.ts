/**
 * The cost an answer carries and the cost its request settles at are one computation: the settlement reuses the
 * answer's quote when it bills the same usage, and computes again only when what is billed changed after the answer
 * was priced (a stream whose usage object grew, a cut stream billed by what it delivered).
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { AnswerPrice, noAttempts, type SettledReport } from '../../../src/billing/answer-report.js';
import { settle, type SettledRequest, type SettleDependencies } from '../../../src/billing/settle.js';
import type { Ledger } from '../../../src/billing/ledger.js';
import type { Reservation } from '../../../src/billing/money-pools.js';
import { nanoToDecimalString } from '../../../src/billing/money.js';
import { NO_PRICES, type Model } from '../../../src/domain/model-records.js';
import type { UsageLogRow } from '../../../src/domain/usage-records.js';
import type { Usage } from '../../../src/ir/usage.js';
import type * as ComputeCost from '../../../src/billing/compute-cost.js';
import { NO_IDENTITY } from '../../../src/customers/request-identity.js';

const computed = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../../src/billing/compute-cost.js', async (importOriginal) => {
  const actual = await importOriginal<typeof ComputeCost>();
  return {
    ...actual,
    computeCost: (...args: Parameters<typeof actual.computeCost>) => {
      computed.count += 1;
      return actual.computeCost(...args);
    },
  };
});

const USD = 1_000_000_000n;
const model = {
  id: 'gpt-test',
  pricing: { ...NO_PRICES, inputPerMtokNano: 3n * USD, outputPerMtokNano: 15n * USD, cachedInputPerMtokNano: 300_000_000n, perImageNano: 40_000_000n },
} as Model;

function usage(input: number, output: number): Usage {
  return { input: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, output: { total: output, text: output, reasoning: 0 } };
}

/** The settlement's world, recording what it charged the reservation and the usage row it wrote. */
function settlement(): { dependencies: SettleDependencies; charged: bigint[]; rows: UsageLogRow[] } {
  const charged: bigint[] = [];
  const rows: UsageLogRow[] = [];
  const ledger = {
    checkpoints: { finish: () => false },
    // As on SQLite: the ledger charges the reservation and leaves the usage row to the usage log.
    settle: (_reservation: Reservation, charge: { costNano: bigint }) => {
      charged.push(charge.costNano);
      return false;
    },
    unreserved: () => ({}) as Reservation,
  } as unknown as Ledger;
  const dependencies = {
    ledger,
    usageLog: { record: (row: UsageLogRow) => rows.push(row) },
    limiter: { adjust: () => Promise.resolve() },
    clock: { now: () => 1_700_000_000_000 },
    logger: { warn: () => undefined },
  } as unknown as SettleDependencies;
  return { dependencies, charged, rows };
}

const request: SettledRequest = {
  requestId: 'req_1', accountId: 'acc_1', keyId: 'key_1', protocol: 'openai', endpoint: '/v1/chat/completions', stream: false, modelId: 'gpt-test', createdAt: 1_700_000_000_000, identity: NO_IDENTITY,
};
const hold = { reservation: {} as Reservation, lease: null, tokenCharges: null };

function settledAt(price: AnswerPrice, billed: Pick<SettledReport, 'usage' | 'billable'>): { cost: bigint; charged: bigint[]; row: UsageLogRow } {
  const { dependencies, charged, rows } = settlement();
  const settled = settle(dependencies, request, hold, null, { status: 200, ...billed, price, ...noAttempts(0, 5) });
  return { cost: settled.costNano, charged, row: rows[0] as UsageLogRow };
}

beforeEach(() => {
  computed.count = 0;
});

describe('one price for the answer and its settlement', () => {
  it('settles a whole answer at the cost its header and usage object carried, computed once', () => {
    const price = new AnswerPrice(model);
    const answered = usage(1200, 300);
    const priced = price.priced('{"usage":{"prompt_tokens":1200}}', { usage: answered }, 'usage');
    const { cost, charged, row } = settledAt(price, { usage: answered });
    // 1200 × $3/M + 300 × $15/M = $0.0036 + $0.0045.
    expect(cost).toBe(8_100_000n);
    expect(priced.headers['x-request-cost-usd']).toBe(nanoToDecimalString(cost));
    expect(String(priced.body)).toContain(`"cost":${nanoToDecimalString(cost)}`);
    expect(charged).toEqual([cost]);
    expect(row.costNano).toBe(cost);
    expect(computed.count).toBe(1);
  });

  it('reuses the quote for equal usage in another object (the report carries its own copy)', () => {
    const price = new AnswerPrice(model, 5000);
    price.costUsd(usage(100, 10));
    const { cost } = settledAt(price, { usage: usage(100, 10) });
    // Half of 100 × $3/M + 10 × $15/M = $0.00045, rounded down.
    expect(cost).toBe(225_000n);
    expect(computed.count).toBe(1);
  });

  it('computes again when the usage object grew after the answer was priced, at the money a fresh price gives', () => {
    const price = new AnswerPrice(model);
    const streamed = usage(1000, 50);
    price.costUsd(streamed);
    const carried = price.quote({ usage: usage(1000, 50) });
    // The upstream's closing event raised the output count on the same object.
    streamed.output.total = 80;
    streamed.output.text = 80;
    const { cost, charged } = settledAt(price, { usage: streamed });
    expect(cost).not.toBe(carried);
    expect(cost).toBe(new AnswerPrice(model).quote({ usage: usage(1000, 80) }));
    expect(charged).toEqual([cost]);
    // The answer's, the settlement's (usage grew), the fresh price's.
    expect(computed.count).toBe(3);
  });

  it('tells billed non-token usage apart: the same images reuse the quote, more images do not', () => {
    const price = new AnswerPrice(model);
    price.priced('{}', { usage: null, billable: { images: 2, imageVariant: { size: '1024x1024' } } }, null);
    expect(settledAt(price, { usage: null, billable: { images: 2, imageVariant: { size: '1024x1024' } } }).cost).toBe(80_000_000n);
    expect(computed.count).toBe(1);
    expect(settledAt(price, { usage: null, billable: { images: 3, imageVariant: { size: '1024x1024' } } }).cost).toBe(120_000_000n);
    expect(computed.count).toBe(2);
  });

  it('prices hosted tool calls added after the answer was priced', () => {
    const priced = { ...model, pricing: { ...model.pricing, perWebSearchNano: 10_000_000n } } as Model;
    const price = new AnswerPrice(priced);
    const answered = usage(10, 10);
    price.quote({ usage: answered });
    const { cost } = settledAt(price, { usage: { ...answered, hostedTools: { webSearch: 1, webFetch: 0, fileSearch: 0 } } });
    expect(cost).toBe(new AnswerPrice(priced).quote({ usage: { ...usage(10, 10), hostedTools: { webSearch: 1, webFetch: 0, fileSearch: 0 } } }));
    expect(cost).toBeGreaterThan(price.quote({ usage: usage(10, 10) }));
  });
});
