/**
 * Background health probes: with HEALTH_PROBE_INTERVAL_SECONDS set, idle channels get a 1-token chat each interval,
 * billed to nobody; when an idle primary starts failing, the probes open its breaker, so the next caller goes
 * straight to the backup without a failed attempt of its own. Probes stop when the gateway stops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { callChat, sleep, usageRow, usageRows } from '../resilience/resilience-support.js';

const MODEL = 'probed-model';

describe('background health probes', () => {
  let gateway: TestGateway;
  let account: SeededAccount;
  let primary: MockOpenAIUpstream;
  let backup: MockOpenAIUpstream;
  let primaryId: string;
  let backupId: string;

  beforeAll(async () => {
    [primary, backup] = await Promise.all([startMockOpenAIUpstream(), startMockOpenAIUpstream()]);
    gateway = await startTestGateway({ env: { HEALTH_PROBE_INTERVAL_SECONDS: '1', HEALTH_PROBE_CONCURRENCY: '1', BREAKER_FAILURE_THRESHOLD: '2' } });
    account = await seedAccount(gateway, { balanceUsd: 5 });
    expect((await gateway.admin('POST', '/admin/models', { id: MODEL, pricing: { input_per_mtok: 1, output_per_mtok: 2 } })).status).toBe(201);
    const channel = (upstream: MockOpenAIUpstream, name: string, priority: number) => ({ name, type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' }, priority });
    primaryId = (await gateway.admin<{ id: string }>('POST', '/admin/channels', channel(primary, 'probed-primary', 10))).body.id;
    backupId = (await gateway.admin<{ id: string }>('POST', '/admin/channels', channel(backup, 'probed-backup', 0))).body.id;
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([primary?.close(), backup?.close()]);
  });

  it('probes idle channels with a 1-token chat that bills nobody', async () => {
    await expect.poll(() => primary.requests.length, { timeout: 10_000, interval: 100 }).toBeGreaterThanOrEqual(1);
    await expect.poll(() => backup.requests.length, { timeout: 10_000, interval: 100 }).toBeGreaterThanOrEqual(1);
    const probe = primary.requests[0]?.body as Record<string, unknown>;
    expect(probe).toMatchObject({ model: 'gpt-4o-mini' });
    expect(probe.max_tokens ?? probe.max_completion_tokens).toBe(1);
    expect(await usageRows(gateway, account.keyId)).toEqual([]);
    const usage = await gateway.admin<{ data: unknown[] }>('GET', '/admin/usage?limit=10');
    expect(usage.body.data).toEqual([]);
    expect((await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${account.accountId}`)).body.balance_usd).toBe(5);
  });

  it('opens the breaker of an idle channel that starts failing, so the next caller goes straight to the backup', async () => {
    primary.setFault({ kind: 'status', status: 500 });
    await expect.poll(async () => (await gateway.admin<{ status: string }>('GET', `/admin/channels/${primaryId}/health`)).body.status, { timeout: 15_000, interval: 200 }).toBe('down');
    const before = primary.requests.length;
    const answer = await callChat(gateway, account.key, 'openai', MODEL, 'hi', false);
    expect(answer.status).toBe(200);
    expect(await usageRow(gateway, account.keyId, answer.requestId)).toMatchObject({ channel_id: backupId, attempts: 1, attempted_channels: [backupId] });
    expect(primary.requests.length).toBe(before);
  });

  it('stops probing when the gateway stops', async () => {
    await gateway.close();
    const primarySeen = primary.requests.length;
    const backupSeen = backup.requests.length;
    await sleep(2500);
    expect([primary.requests.length, backup.requests.length]).toEqual([primarySeen, backupSeen]);
  });
});
