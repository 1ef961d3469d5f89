/**
 * What limits cost on Redis per request, counted at the wire by a proxy in front of Redis: a request limited by a
 * key concurrency, an account concurrency, RPM and TPM sends one command before its upstream answers (the admission
 * script: every slot and every window) and one after it ends (the settlement script: the token corrections and the
 * slot releases), streamed or not.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIT, SETTLE } from '../../../src/limits/redis-lua.js';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { RedisCommandProxy, type ProxiedCommand } from '../../support/redis-command-proxy.js';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../../unit/limits/redis-test-support.js';
import { sleep } from '../admin/helpers.js';

const MODEL = 'round-trip-model';
const sha = (source: string): string => createHash('sha1').update(source).digest('hex');
const ADMIT_SHA = sha(ADMIT);
const SETTLE_SHA = sha(SETTLE);

describe.skipIf(TEST_REDIS_URL === undefined)('Redis commands per limited request', () => {
  const redis = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());
  let proxy: RedisCommandProxy;
  let upstream: MockOpenAIUpstream;
  let gateway: TestGateway;
  let account: SeededAccount;

  beforeAll(async () => {
    proxy = await RedisCommandProxy.start(TEST_REDIS_URL ?? '');
    upstream = await startMockOpenAIUpstream({ chunkDelayMs: 50 });
    gateway = await startTestGateway({ env: { REDIS_URL: proxy.url, REDIS_KEY_PREFIX: redis.prefix } });
    await addRoutedModel(gateway, {
      model: MODEL,
      channel: { name: 'round-trip-openai', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' } },
    });
    account = await seedAccount(gateway, { key: { concurrency: 5, rpm: 1000, tpm: 1_000_000 } });
    const limited = await gateway.admin('PATCH', `/admin/accounts/${account.accountId}`, { concurrency: 10, rpm: 1000, tpm: 1_000_000 });
    expect(limited.status, JSON.stringify(limited.body)).toBe(200);
    // A first request loads the scripts into Redis (EVAL once) and warms the gateway's caches.
    expect((await chat(false)).status).toBe(200);
    await sleep(50);
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await proxy?.close();
    await redis.cleanUp();
  });

  function chat(stream: boolean): Promise<Response> {
    return fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, stream, max_tokens: 50, messages: [{ role: 'user', content: 'count the round trips' }] }),
    });
  }

  /** Commands sent since `from`, the fleet's heartbeats left out (they run on their own timer, not per request). */
  function sentSince(from: number): ProxiedCommand[] {
    return proxy.commands.slice(from).filter((command) => !command.args.some((arg) => arg.endsWith('fleet:members')));
  }

  /** The script a command ran, by name, with its keys. */
  function described(command: ProxiedCommand): { script: string; keys: string[] } {
    const [name, digest, count] = command.args;
    expect(name?.toLowerCase()).toBe('evalsha');
    const script = digest === ADMIT_SHA ? 'admit' : digest === SETTLE_SHA ? 'settle' : `other ${digest}`;
    return { script, keys: command.args.slice(3, 3 + Number(count)).map((key) => key.slice(redis.prefix.length).replace(/:\d+$/, '')) };
  }

  const admitted = (): { script: string; keys: string[] } => ({
    script: 'admit',
    keys: [
      `cc:key:${account.keyId}:concurrency`,
      `cc:account:${account.accountId}:concurrency`,
      `rl:key:${account.keyId}:rpm`,
      `rl:key:${account.keyId}:tpm`,
      `rl:account:${account.accountId}:rpm`,
      `rl:account:${account.accountId}:tpm`,
    ],
  });

  const settled = (): { script: string; keys: string[] } => ({
    script: 'settle',
    keys: [`rl:key:${account.keyId}:tpm`, `rl:account:${account.accountId}:tpm`, `cc:key:${account.keyId}:concurrency`, `cc:account:${account.accountId}:concurrency`],
  });

  it('a unary request: the admission script, then the settlement script, nothing else', async () => {
    const from = proxy.commands.length;
    const response = await chat(false);
    expect(response.status).toBe(200);
    await response.json();
    await sleep(100);
    expect(sentSince(from).map(described)).toEqual([admitted(), settled()]);
  });

  it('a streamed request: only the admission script before the upstream answers, the settlement script after the stream ends', async () => {
    const from = proxy.commands.length;
    const seen = upstream.requests.length;
    const response = await chat(true);
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    // The upstream has been called and is streaming (one event every 50 ms): one command so far.
    expect(upstream.requests.length).toBe(seen + 1);
    expect(sentSince(from).map(described)).toEqual([admitted()]);
    while (!(await reader.read()).done);
    await sleep(100);
    expect(sentSince(from).map(described)).toEqual([admitted(), settled()]);
  });
});
