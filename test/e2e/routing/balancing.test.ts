/**
 * Balancing strategies over the wire: two mock upstream channels of one model at the same priority. With
 * least-latency, set through the admin API, traffic moves to the faster channel within seconds; with
 * least-in-flight, concurrent streams spread evenly over the channels.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { callChat } from '../resilience/resilience-support.js';

const mocks: MockOpenAIUpstream[] = [];
async function mock(options: { responseDelayMs?: number; chunkDelayMs?: number }): Promise<MockOpenAIUpstream> {
  const started = await startMockOpenAIUpstream(options);
  mocks.push(started);
  return started;
}

function channel(upstream: MockOpenAIUpstream, name: string, model: string): Record<string, unknown> {
  return { name, type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [model]: 'gpt-4o-mini' }, priority: 0, weight: 1 };
}

describe('balancing strategies', () => {
  let gateway: TestGateway;
  let account: SeededAccount;

  beforeAll(async () => {
    gateway = await startTestGateway();
    account = await seedAccount(gateway, { balanceUsd: 50 });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all(mocks.map((entry) => entry.close()));
  });

  it('least-latency, switched on through the admin API, moves traffic to the faster channel within seconds', async () => {
    const slow = await mock({ responseDelayMs: 150 });
    const fast = await mock({});
    expect((await gateway.admin('POST', '/admin/models', { id: 'latency-model', pricing: { input_per_mtok: 1, output_per_mtok: 2 } })).status).toBe(201);
    for (const [upstream, name] of [[slow, 'latency-slow'], [fast, 'latency-fast']] as const) {
      expect((await gateway.admin('POST', '/admin/channels', channel(upstream, name, 'latency-model'))).status).toBe(201);
    }
    const patched = await gateway.admin<{ routing: { strategy: string } }>('PATCH', '/admin/models/latency-model', { routing: { strategy: 'least-latency' } });
    expect(patched.status).toBe(200);
    expect(patched.body.routing).toEqual({ strategy: 'least-latency' });
    expect((await gateway.admin<{ routing: unknown }>('GET', '/admin/models/latency-model')).body.routing).toEqual({ strategy: 'least-latency' });

    const startedAt = performance.now();
    // Each channel answers once while it has no figure yet; from then on the faster one leads.
    for (let index = 0; index < 4; index += 1) expect((await callChat(gateway, account.key, 'openai', 'latency-model', 'hi', false)).status).toBe(200);
    const slowBefore = slow.requests.length;
    const fastBefore = fast.requests.length;
    for (let index = 0; index < 20; index += 1) expect((await callChat(gateway, account.key, 'openai', 'latency-model', 'hi', index % 2 === 0)).status).toBe(200);
    const elapsedMs = performance.now() - startedAt;
    expect(slowBefore).toBeGreaterThanOrEqual(1);
    // A small share of requests explores by weight, so the slow channel may see one or two of the twenty.
    expect(fast.requests.length - fastBefore).toBeGreaterThanOrEqual(17);
    expect(slow.requests.length - slowBefore).toBeLessThanOrEqual(3);
    expect(elapsedMs).toBeLessThan(15_000);
    // The figures balancing reads, as the admin sees them.
    const channels = (await gateway.admin<{ data: Array<{ id: string; name: string }> }>('GET', '/admin/channels?limit=100')).body.data;
    const latencyOf = async (name: string): Promise<number> => {
      const id = channels.find((entry) => entry.name === name)?.id ?? '';
      const report = await gateway.admin<{ in_flight: number; models: Array<{ model: string; latency_ms: number | null }> }>('GET', `/admin/channels/${id}/health`);
      expect(report.body.in_flight).toBe(0);
      return report.body.models.find((entry) => entry.model === 'latency-model')?.latency_ms ?? -1;
    };
    const slowLatency = await latencyOf('latency-slow');
    const fastLatency = await latencyOf('latency-fast');
    expect(slowLatency).toBeGreaterThanOrEqual(140);
    expect(fastLatency).toBeGreaterThanOrEqual(0);
    expect(fastLatency).toBeLessThan(slowLatency);
  });

  it('an unknown strategy is refused with the error object', async () => {
    const refused = await gateway.admin<{ error: { param: string } }>('PATCH', '/admin/models/latency-model', { routing: { strategy: 'fastest' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toContain('routing');
  });

  it('least-in-flight spreads concurrent streams evenly over the channels', async () => {
    const first = await mock({ chunkDelayMs: 40 });
    const second = await mock({ chunkDelayMs: 40 });
    expect((await gateway.admin('POST', '/admin/models', { id: 'spread-model', pricing: { input_per_mtok: 1, output_per_mtok: 2 }, routing: { strategy: 'least-in-flight' } })).status).toBe(201);
    expect((await gateway.admin('POST', '/admin/channels', channel(first, 'spread-one', 'spread-model'))).status).toBe(201);
    expect((await gateway.admin('POST', '/admin/channels', channel(second, 'spread-two', 'spread-model'))).status).toBe(201);
    // Streams of a few hundred milliseconds each (the mock paces every chunk), all open at once.
    const prompt = 'please write a fairly long answer with many words in it so the stream lasts a while';
    const answers = await Promise.all(Array.from({ length: 8 }, () => callChat(gateway, account.key, 'openai', 'spread-model', prompt, true)));
    expect(answers.map((answer) => answer.status)).toEqual(new Array(8).fill(200));
    expect([first.requests.length, second.requests.length]).toEqual([4, 4]);
  });

  it('gateway.yaml sets a model\'s strategy too', async () => {
    const configFile = path.join(gateway.dataDirectory, 'gateway.yaml');
    await writeFile(configFile, [
      'models:',
      '  - id: yaml-balanced',
      '    pricing: { input_per_mtok: 1, output_per_mtok: 2 }',
      '    routing: { strategy: least-in-flight }',
      '',
    ].join('\n'));
    const second = await startTestGateway({ env: { GATEWAY_CONFIG: configFile } });
    try {
      expect((await second.admin<{ routing: unknown }>('GET', '/admin/models/yaml-balanced')).body.routing).toEqual({ strategy: 'least-in-flight' });
      expect(second.gateway.services.catalog.model('yaml-balanced')?.routingStrategy).toBe('least-in-flight');
    } finally {
      await second.close();
    }
  });
});
