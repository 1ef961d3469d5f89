import { describe, expect, it } from 'vitest';
import { budgetPeriodAt } from '../../../src/domain/budget-period.js';
import type { Account, ApiKey } from '../../../src/domain/records.js';
import type { GatewayError } from '../../../src/errors/gateway-error.js';
import { LocalInvalidationBus } from '../../../src/invalidation/invalidation-bus.js';
import { LiveStreams, streamStopReason } from '../../../src/relay/live-streams.js';
import { createLogger } from '../../../src/shared/logger.js';

const NOW = Date.UTC(2026, 5, 15, 12);

function key(overrides: Partial<ApiKey> = {}): ApiKey {
  return {
    id: 'key_a', accountId: 'acct_a', name: 'k', secretHash: 'h', displayHint: 'sk-…abcd', status: 'enabled', quotaNano: null, spentNano: 5n,
    allowedModels: null, ipAllowlist: null, expiresAt: null, rpm: null, tpm: null, concurrency: null, budget: null, allowedOrigins: null,
    createdAt: 0, updatedAt: 0, environment: null, createdBy: null, playground: false, ...overrides,
  };
}

function account(overrides: Partial<Account> = {}): Account {
  return {
    id: 'acct_a', email: 'a@example.com', passwordHash: null, tier: 'default', balanceNano: 0n, creditLineNano: 0n, alertBalanceNano: null,
    status: 'enabled', rpm: null, tpm: null, concurrency: null, deletedAt: null, createdAt: 0, updatedAt: 0, ...overrides,
  };
}

describe('streamStopReason', () => {
  it('stops a stream for what refuses a new request, and for a quota or budget a change left spent', () => {
    const day = budgetPeriodAt('day', NOW).start;
    const cases: Array<[ApiKey | null, Account | null, string | null]> = [
      [key(), account(), null],
      [null, null, 'revoked_api_key'],
      [key({ status: 'revoked' }), account(), 'revoked_api_key'],
      [key(), account({ status: 'deleted' }), 'revoked_api_key'],
      [key({ expiresAt: NOW - 1 }), account(), 'expired_api_key'],
      [key({ status: 'disabled' }), account(), 'key_disabled'],
      [key(), account({ status: 'disabled' }), 'account_disabled'],
      [key({ quotaNano: 5n }), account(), 'quota_exhausted'],
      [key({ quotaNano: 6n }), account(), null],
      [key({ budget: { period: 'day', limitNano: 10n, spentNano: 10n, periodStart: day } }), account(), 'quota_exhausted'],
      // Last period's spend counts for nothing now.
      [key({ budget: { period: 'day', limitNano: 10n, spentNano: 10n, periodStart: day - 86_400_000 } }), account(), null],
    ];
    for (const [k, a, code] of cases) expect(streamStopReason(k, a, NOW)?.code ?? null).toBe(code);
  });
});

describe('LiveStreams', () => {
  it('stops the streams of a key whose change refuses it, once, and reads storage only for keys with streams', async () => {
    const keys = new Map<string, ApiKey>([['key_a', key()], ['key_b', key({ id: 'key_b' })]]);
    const reads: string[] = [];
    const storage = {
      keys: { getById: async (id: string) => (reads.push(id), keys.get(id) ?? null) },
      accounts: { getById: async () => account() },
    } as unknown as ConstructorParameters<typeof LiveStreams>[0];
    const bus = new LocalInvalidationBus();
    const streams = new LiveStreams(storage, { now: () => NOW }, createLogger('error', () => undefined), bus);
    const stopped: Array<[string, string]> = [];
    const stopOf = (name: string) => (reason: GatewayError): void => {
      stopped.push([name, reason.code]);
    };
    streams.open('key_a', 'acct_a', stopOf('a1'));
    const closeA2 = streams.open('key_a', 'acct_a', stopOf('a2'));
    streams.open('key_b', 'acct_a', stopOf('b'));
    closeA2();
    expect(streams.size).toBe(2);

    await bus.publish({ kind: 'key', id: 'key_a' });
    expect(stopped).toEqual([]);
    await bus.publish({ kind: 'key', id: 'key_none' });
    expect(reads).toEqual(['key_a']);

    keys.set('key_a', key({ status: 'disabled' }));
    await bus.publish({ kind: 'key', id: 'key_a' });
    await bus.publish({ kind: 'key', id: 'key_a' });
    expect(stopped).toEqual([['a1', 'key_disabled']]);
    expect(streams.size).toBe(1);

    keys.set('key_b', key({ id: 'key_b', status: 'revoked' }));
    await bus.publish({ kind: 'account', id: 'acct_a' });
    expect(stopped).toEqual([['a1', 'key_disabled'], ['b', 'revoked_api_key']]);
    expect(streams.size).toBe(0);
  });
});
