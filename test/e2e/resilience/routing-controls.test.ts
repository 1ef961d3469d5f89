/**
 * The other routing controls end to end: rejected upstream keys leave the rotation and are flagged for the admin;
 * per-channel-model RPM (for upstreams with strict throttling); the retry time budget; idle timeouts on slow drips;
 * embeddings fail over like chat; health shared between instances through Redis.
 */
import { RedisFixture } from '../../unit/limits/redis-test-support.js';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { callChat, channelFor, FAMILIES, sleep, startUpstream, usageRow, type AnyUpstream, type Family } from './resilience-support.js';

const upstreams: AnyUpstream[] = [];
async function upstream(kind: Family, options: { chunkDelayMs?: number } = {}): Promise<AnyUpstream> {
  const started = await startUpstream(kind, options);
  upstreams.push(started);
  return started;
}

afterAll(async () => {
  await Promise.all(upstreams.map((entry) => entry.close()));
});

describe('routing controls', () => {
  let gateway: TestGateway;
  let account: SeededAccount;

  beforeAll(async () => {
    gateway = await startTestGateway();
    account = await seedAccount(gateway, { balanceUsd: 50 });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('a rejected key leaves the rotation, is flagged and stored, and updating the keys clears it', async () => {
    const mock = await upstream('openai');
    const { channelId } = await addRoutedModel(gateway, {
      model: 'keyed',
      channel: { ...channelFor(mock, 'keyed', 'keyed'), api_key: undefined, api_keys: ['sk-revoked-upstream-key-0001', 'sk-upstream-test'] },
    });
    const first = await callChat(gateway, account.key, 'openai', 'keyed', 'hi', false);
    expect(first.status).toBe(200);
    expect(await usageRow(gateway, account.keyId, first.requestId)).toMatchObject({ attempts: 2, attempted_channels: [channelId, channelId] });
    const flagged = await gateway.admin<{ status: string; rejected_keys: Array<{ index: number; reason: string }> }>('GET', `/admin/channels/${channelId}/health`);
    expect(flagged.body.rejected_keys).toEqual([expect.objectContaining({ index: 0, reason: 'credential' })]);
    expect(flagged.body.status).toBe('degraded');
    expect(JSON.stringify(flagged.body)).not.toContain('sk-revoked');
    const stored = await gateway.gateway.services.storage.channelKeyFlags.listAll();
    expect(stored).toEqual([expect.objectContaining({ channelId, keyIndex: 0 })]);
    expect(JSON.stringify(stored)).not.toContain('sk-revoked');

    const before = mock.requests.length;
    for (let index = 0; index < 4; index += 1) expect((await callChat(gateway, account.key, 'openai', 'keyed', 'hi', false)).status).toBe(200);
    expect(mock.requests.slice(before).map((request) => request.headers.authorization)).toEqual(new Array(4).fill('Bearer sk-upstream-test'));

    expect((await gateway.admin('PATCH', `/admin/channels/${channelId}`, { api_keys: ['sk-upstream-test'] })).status).toBe(200);
    await expect.poll(async () => (await gateway.gateway.services.storage.channelKeyFlags.listAll()).length).toBe(0);
    const cleared = await gateway.admin<{ status: string; rejected_keys: unknown[] }>('GET', `/admin/channels/${channelId}/health`);
    expect(cleared.body).toMatchObject({ status: 'operational', rejected_keys: [] });
  });

  it('a channel-model at its own RPM is skipped; when every one is, the caller gets 429 with Retry-After', async () => {
    // The windows are minutes aligned to the clock: do not straddle a boundary.
    if (Date.now() % 60_000 > 55_000) await sleep(60_000 - (Date.now() % 60_000) + 50);
    const a = await upstream('openai');
    const b = await upstream('anthropic');
    const { channelId: aId } = await addRoutedModel(gateway, { model: 'limited', channel: channelFor(a, 'limited-a', 'limited', { priority: 10, settings: { model_limits: { limited: { rpm: 2 } } } }) });
    const bId = (await gateway.admin<{ id: string }>('POST', '/admin/channels', channelFor(b, 'limited-b', 'limited', { settings: { model_limits: { limited: { rpm: 1 } } } }))).body.id;
    const channels: Array<string | null | undefined> = [];
    for (let index = 0; index < 3; index += 1) {
      const answer = await callChat(gateway, account.key, 'openai', 'limited', 'hi', false);
      expect(answer.status).toBe(200);
      channels.push((await usageRow(gateway, account.keyId, answer.requestId))?.channel_id);
    }
    expect(channels).toEqual([aId, aId, bId]);
    const refused = await callChat(gateway, account.key, 'anthropic', 'limited', 'hi', false);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.error).toMatchObject({ type: 'rate_limit_error' });
    const openai = await callChat(gateway, account.key, 'openai', 'limited', 'hi', false);
    expect(openai.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    expect(await usageRow(gateway, account.keyId, openai.requestId)).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded', attempts: 0 });
  });

  const DRIP_MS = 1000;

  it('a slow drip past the idle timeout ends the stream with an error event once an answer reached the caller; before that it fails over', async () => {
    for (const family of FAMILIES) {
      // Each chunk of the drip comes DRIP_MS after the last: a whole answer would take several of those.
      const drip = await upstream(family, { chunkDelayMs: DRIP_MS });
      const backup = await upstream(family);
      const model = `drip-${family}`;
      const { channelId } = await addRoutedModel(gateway, { model, channel: channelFor(drip, `${model}-slow`, model, { priority: 10, settings: { idle_timeout_ms: 150 } }) });
      const backupChannel = await gateway.admin<{ id: string }>('POST', '/admin/channels', channelFor(backup, `${model}-backup`, model));
      const started = Date.now();
      const result = await callChat(gateway, account.key, family, model, 'Please tell me about the grey heron of the river bank', true);
      // The idle timeout (150 ms) ends the wait at the first gap, long before the drip would finish.
      expect(Date.now() - started).toBeLessThan(DRIP_MS * 3);
      expect(result.status).toBe(200);
      const row = await usageRow(gateway, account.keyId, result.requestId);
      if (family === 'gemini') {
        // Gemini's first chunk already carries text: it reached the caller, so the gap breaks the stream.
        expect(result.streamError).not.toBeNull();
        expect(result.completed).toBe(false);
        expect(backup.requests.length).toBe(0);
        expect(row).toMatchObject({ status: 502, error_code: 'upstream_error', attempts: 1, attempted_channels: [channelId] });
      } else {
        // Only a preamble (OpenAI's role chunk, Anthropic's message_start) came before the gap: held back, so the
        // request fails over and the caller never sees the slow channel.
        expect(result).toMatchObject({ streamError: null, completed: true });
        expect(backup.requests.length).toBe(1);
        expect(row).toMatchObject({ status: 200, attempts: 2, attempted_channels: [channelId, backupChannel.body.id] });
      }
    }
    // An OpenAI drip in front of an Anthropic caller: only the role chunk came before the gap, and it produces no
    // bytes on the Anthropic wire, so the request still fails over.
    const translated = await callChat(gateway, account.key, 'anthropic', 'drip-openai', 'Please tell me about herons', true);
    expect(translated).toMatchObject({ status: 200, streamError: null, completed: true });
    expect(await usageRow(gateway, account.keyId, translated.requestId)).toMatchObject({ status: 200, attempts: 2 });
  });

  it('embeddings fail over like chat', async () => {
    const primary = await upstream('openai');
    const backup = await upstream('openai');
    await addRoutedModel(gateway, { model: 'embed-pool', kind: 'embedding', channel: { ...channelFor(primary, 'embed-primary', 'embed-pool', { priority: 10 }), models: { 'embed-pool': 'text-embedding-3-small' } } });
    await gateway.admin('POST', '/admin/channels', { ...channelFor(backup, 'embed-backup', 'embed-pool'), models: { 'embed-pool': 'text-embedding-3-small' } });
    primary.fault({ kind: 'status', status: 503 });
    const response = await fetch(`${gateway.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'embed-pool', input: 'a heron' }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: unknown[] }).data).toHaveLength(1);
    expect(await usageRow(gateway, account.keyId, response.headers.get('x-request-id') ?? '')).toMatchObject({ status: 200, attempts: 2 });
  });
});

describe('retry budget', () => {
  let gateway: TestGateway;
  let account: SeededAccount;

  beforeAll(async () => {
    // A budget of 2.5 s against first-byte timeouts of 2 s: a second attempt that waited its whole timeout would end
    // 4 s in, one that waits only for what is left of the budget ends at 2.5 s. The 1.5 s between them is room for a
    // loaded machine's stalls (at 500 ms and 350 ms the room was 200 ms).
    gateway = await startTestGateway({ env: { RETRY_BUDGET_MS: '2500' } });
    account = await seedAccount(gateway);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('no attempt starts after the budget, and a retry waits only for what is left of it', async () => {
    const hanging = await Promise.all([upstream('openai'), upstream('openai'), upstream('openai')]);
    for (const [index, mock] of hanging.entries()) {
      mock.fault({ kind: 'delay', ms: 20_000 });
      const channel = channelFor(mock, `budget-${index}`, 'budget', { priority: 10 - index, settings: { first_byte_timeout_ms: 2000 } });
      if (index === 0) await addRoutedModel(gateway, { model: 'budget', channel });
      else await gateway.admin('POST', '/admin/channels', channel);
    }
    const started = Date.now();
    const result = await callChat(gateway, account.key, 'openai', 'budget', 'hi', false);
    const elapsed = Date.now() - started;
    expect(result.status).toBe(502);
    expect(result.error).toMatchObject({ code: 'upstream_error', type: 'upstream_error' });
    expect(String(result.error?.message)).toMatch(/retry time budget/);
    expect(elapsed).toBeGreaterThanOrEqual(2480);
    // Less than two whole first-byte timeouts: the second attempt was cut at the budget.
    expect(elapsed).toBeLessThan(4000);
    expect(await usageRow(gateway, account.keyId, result.requestId)).toMatchObject({ status: 502, attempts: 2 });
    expect(hanging[2]!.requests.length).toBe(0);
  }, 60_000);
});

describe.skipIf(process.env.TEST_REDIS_URL === undefined)('health shared between instances (REDIS_URL)', () => {
  let first: TestGateway;
  let second: TestGateway;
  const prefix = `unigate-test:${randomBytes(6).toString('hex')}:`;

  afterAll(async () => {
    await second?.close();
    await first?.close();
    await new RedisFixture(process.env.TEST_REDIS_URL ?? '', prefix).cleanUp();
  });

  it('a breaker opened on one instance is skipped by the other', async () => {
    const env = { REDIS_URL: process.env.TEST_REDIS_URL ?? '', REDIS_KEY_PREFIX: prefix, BREAKER_FAILURE_THRESHOLD: '2', BREAKER_COOLDOWN_MS: '60000', SECRET_KEY: 'shared-secret-for-both-instances' };
    first = await startTestGateway({ env, database: 'sqlite' });
    second = await startTestGateway({ env: { ...env, DATABASE_URL: `sqlite:${path.join(first.dataDirectory, 'gateway.db')}` }, database: 'sqlite' });
    const primary = await upstream('openai');
    const backup = await upstream('openai');
    const { channelId: primaryId } = await addRoutedModel(second, { model: 'shared', channel: channelFor(primary, 'shared-primary', 'shared', { priority: 10 }) });
    await second.admin('POST', '/admin/channels', channelFor(backup, 'shared-backup', 'shared'));
    const account = await seedAccount(second);
    primary.fault({ kind: 'status', status: 500, times: 2 });
    for (let index = 0; index < 2; index += 1) expect((await callChat(second, account.key, 'openai', 'shared', 'hi', false)).status).toBe(200);
    const shared = await first.admin<{ shared: boolean; channels: Array<{ channel_id: string; models: Array<{ state: string }> }> }>('GET', '/admin/health');
    expect(shared.body.shared).toBe(true);
    await expect.poll(async () => {
      const report = await first.admin<{ models: Array<{ state: string }> }>('GET', `/admin/channels/${primaryId}/health`);
      return report.body.models?.[0]?.state;
    }, { timeout: 8000 }).toBe('open');
  });
});
