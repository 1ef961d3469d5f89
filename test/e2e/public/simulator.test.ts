import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';

describe('the built-in simulator channel', () => {
  let gateway: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startTestGateway();
    await addRoutedModel(gateway, { model: 'sim-fast', channel: { name: 'sim-fast', type: 'simulator', models: ['sim-fast'], settings: { output_tokens: 12 } } });
    await addRoutedModel(gateway, { model: 'sim-paced', channel: { name: 'sim-paced', type: 'simulator', models: ['sim-paced'], settings: { latency_ms: 150, chunk_delay_ms: 20, output_tokens: 10 } } });
    const account = await seedAccount(gateway);
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('answers deterministically, says that it is simulated, and reports realistic usage', async () => {
    const request = { model: 'sim-fast', messages: [{ role: 'user' as const, content: 'The same question twice' }] };
    const first = await client.chat.completions.create(request);
    const second = await client.chat.completions.create(request);
    expect(first.choices[0]?.message.content).toBe(second.choices[0]?.message.content);
    expect(first.choices[0]?.message.content).toMatch(/^\[simulated response from the gateway simulator\]/);
    expect(first.system_fingerprint).toBe('gateway-simulator');
    expect(first.usage).toMatchObject({ completion_tokens: 12, total_tokens: (first.usage?.prompt_tokens ?? 0) + 12 });
    expect(first.usage?.prompt_tokens).toBeGreaterThan(3);
  });

  it('streams with the configured latency and pacing, and honours max_tokens', async () => {
    const started = performance.now();
    const stream = client.chat.completions.stream({ model: 'sim-paced', max_tokens: 4, messages: [{ role: 'user', content: 'pace me' }] });
    let firstDeltaAt = 0;
    stream.on('content', () => {
      firstDeltaAt ||= performance.now();
    });
    const final = await stream.finalChatCompletion();
    const elapsed = performance.now() - started;
    expect(firstDeltaAt - started).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeGreaterThanOrEqual(150 + 3 * 20);
    expect(final.choices[0]?.finish_reason).toBe('length');
    expect(final.choices[0]?.message.content?.split(' ')).toHaveLength(4);
  });
});
