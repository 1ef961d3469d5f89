import { newId } from '../../src/shared/ids.js';
import type { Account, Announcement, ApiKey, Channel, Plan, Subscription, Tier } from '../../src/domain/records.js';
import type { Model } from '../../src/domain/model-records.js';
import type { UsageLogRow } from '../../src/domain/usage-records.js';

/** Above 2^53: a double would round these. */
export const HUGE_NANO = 2n ** 60n + 12_345n;

export function makeAccount(overrides: Partial<Account> = {}): Account {
  const id = newId('acct');
  return {
    id,
    email: `${id}@example.test`,
    passwordHash: 'scrypt$abc',
    tier: 'default',
    balanceNano: 0n,
    creditLineNano: 0n,
    alertBalanceNano: null,
    status: 'enabled',
    rpm: null,
    tpm: null,
    concurrency: null,
    deletedAt: null,
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    ...overrides,
  };
}

export function makeApiKey(accountId: string, overrides: Partial<ApiKey> = {}): ApiKey {
  const id = newId('key');
  return {
    id,
    accountId,
    name: 'default',
    secretHash: `hash-${id}`,
    displayHint: 'sk-…a1b2',
    status: 'enabled',
    quotaNano: null,
    spentNano: 0n,
    allowedModels: null,
    ipAllowlist: null,
    expiresAt: null,
    rpm: null,
    tpm: null,
    concurrency: null,
    budget: null,
    allowedOrigins: null,
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    environment: null,
    createdBy: null,
    playground: false,
    ...overrides,
  };
}

export function makeChannel(overrides: Partial<Channel> = {}): Channel {
  const id = newId('chan');
  return {
    id,
    name: `channel-${id}`,
    type: 'openai',
    baseUrl: 'https://api.example.test/v1',
    apiKeys: [`sk-upstream-${id}-one`, `sk-upstream-${id}-two`],
    models: { 'gpt-4o': 'gpt-4o-2024-08-06' },
    priority: 10,
    weight: 3,
    enabled: true,
    headers: { 'x-org': 'org-1' },
    settings: { timeoutMs: 30_000, nested: { flag: true, list: [1, 'two'] } },
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    ...overrides,
  };
}

export function makeModel(overrides: Partial<Model> = {}): Model {
  return {
    id: newId('model'),
    kind: 'chat',
    public: true,
    upstream: 'gpt-4o-2024-08-06',
    ownedBy: 'openai',
    pricing: {
      inputPerMtokNano: 2_500_000_000n,
      outputPerMtokNano: HUGE_NANO,
      cachedInputPerMtokNano: null,
      cacheWritePerMtokNano: null,
      perRequestNano: 0n,
      perImageNano: null,
      perAudioMinuteNano: null,
      perMcharNano: null,
      perWebSearchNano: 10_000_000n,
      perGroundedPromptNano: null,
      perWebFetchNano: null,
      perFileSearchNano: 2_500_000n,
      perSearchUnitNano: 2_000_000n,
      batchInputPerMtokNano: 500_000n,
      batchOutputPerMtokNano: null,
    },
    rpm: 600,
    tpm: 1_000_000,
    routingStrategy: 'least-latency',
    cache: { ttlSeconds: 600, hitPriceBasisPoints: 2500, shared: false },
    fallbacks: ['fallback-model'],
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    ...overrides,
  };
}

export function makePlan(overrides: Partial<Plan> = {}): Plan {
  const id = newId('plan');
  return {
    id,
    name: `plan-${id}`,
    period: 'month',
    quotaNano: HUGE_NANO,
    overagePolicy: 'limit',
    overageLimitNano: 5_000_000_000n,
    rpm: null,
    tpm: 50_000,
    selfService: true,
    priceNano: 9_990_000_000n,
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    ...overrides,
  };
}

export function makeSubscription(accountId: string, planId: string, overrides: Partial<Subscription> = {}): Subscription {
  return {
    id: newId('sub'),
    accountId,
    planId,
    status: 'active',
    startsAt: 1_700_000_000_000,
    currentPeriodStart: 1_700_000_000_000,
    currentPeriodEnd: 1_702_592_000_000,
    usedNano: HUGE_NANO,
    overageUsedNano: 0n,
    cancelAt: null,
    paidThrough: 1_702_592_000_000,
    renews: true,
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    ...overrides,
  };
}

export function makeUsageLog(overrides: Partial<UsageLogRow> = {}): UsageLogRow {
  return {
    requestId: newId('req'),
    accountId: null,
    keyId: null,
    model: 'gpt-4o',
    channelId: 'chan_1',
    protocol: 'openai-chat',
    endpoint: '/v1/chat/completions',
    stream: false,
    status: 200,
    errorCode: null,
    promptTokens: 12,
    completionTokens: 34,
    cachedTokens: 0,
    reasoningTokens: 5,
    totalTokens: 46,
    costNano: 123_456n,
    latencyMs: 850,
    ttfbMs: 120,
    attempts: 1,
    createdAt: 1_700_000_000_000,
    cacheHit: false,
    ...overrides,
  };
}

export function makeAnnouncement(overrides: Partial<Announcement> = {}): Announcement {
  return {
    id: newId('ann'),
    title: 'Maintenance',
    body: 'Short downtime tonight.',
    level: 'info',
    publishedAt: 1_700_000_000_000,
    expiresAt: null,
    createdAt: 1_700_000_000_000,
    ...overrides,
  };
}

let tierCounter = 0;

export function makeTier(overrides: Partial<Tier> = {}): Tier {
  tierCounter += 1;
  return {
    name: `tier-${tierCounter}-${newId('t').slice(-6)}`,
    rpm: 600,
    tpm: 2_000_000,
    signupCreditNano: null,
    signupCreditDays: null,
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    ...overrides,
  };
}
