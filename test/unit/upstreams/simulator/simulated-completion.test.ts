import { describe, expect, it } from 'vitest';
import { estimateMessagesTokens } from '../../../../src/shared/estimate-tokens.js';
import { readSimulatorSettings, simulateCompletion, type SimulatorSettings } from '../../../../src/upstreams/simulator/simulated-completion.js';

const settings: SimulatorSettings = { latencyMs: 0, chunkDelayMs: 0, outputTokens: 24 };
const messages = [{ role: 'user', content: 'Say hello' }];
const VOCABULARY = new Set(['the', 'gateway', 'simulator', 'answers', 'with', 'deterministic', 'text', 'so', 'demos', 'benchmarks',
  'and', 'load', 'tests', 'run', 'without', 'credentials', 'every', 'reply', 'is', 'synthetic']);

describe('simulateCompletion', () => {
  it('is deterministic for the same messages', () => {
    const first = simulateCompletion({ model: 'a', messages }, settings, 1_700_000_000_123);
    const second = simulateCompletion({ model: 'b', temperature: 1, messages: structuredClone(messages) }, settings, 1_700_000_000_999);
    expect(second).toEqual(first);
  });

  it('differs for different messages', () => {
    const first = simulateCompletion({ messages }, settings, 0);
    const other = simulateCompletion({ messages: [{ role: 'user', content: 'Say goodbye' }] }, settings, 0);
    expect(other.id).not.toBe(first.id);
    expect(other.words).not.toEqual(first.words);
  });

  it('says that it is simulated, first', () => {
    const { words } = simulateCompletion({ messages }, settings, 0);
    expect(words.slice(0, 6).join(' ')).toBe('[simulated response from the gateway simulator]');
    for (const word of words.slice(6)) expect(VOCABULARY.has(word)).toBe(true);
  });

  it('has a chat-completion id and a created time in seconds', () => {
    const completion = simulateCompletion({ messages }, settings, 1_700_000_000_999);
    expect(completion.id).toMatch(/^chatcmpl-sim[0-9a-f]{24}$/);
    expect(completion.created).toBe(1_700_000_000);
  });

  it('produces outputTokens words and stops', () => {
    const completion = simulateCompletion({ messages }, settings, 0);
    expect(completion.words).toHaveLength(24);
    expect(completion.finishReason).toBe('stop');
    expect(simulateCompletion({ messages }, { ...settings, outputTokens: 100 }, 0).words).toHaveLength(100);
    // Never shorter than the simulation notice.
    expect(simulateCompletion({ messages }, { ...settings, outputTokens: 2 }, 0).words).toHaveLength(6);
  });

  it('honours max_tokens with finish_reason length, as a prefix of the full answer', () => {
    const full = simulateCompletion({ messages }, settings, 0);
    const capped = simulateCompletion({ messages, max_tokens: 10 }, settings, 0);
    expect(capped.words).toEqual(full.words.slice(0, 10));
    expect(capped.finishReason).toBe('length');
    expect(capped.id).toBe(full.id);
  });

  it('prefers max_completion_tokens over max_tokens', () => {
    const capped = simulateCompletion({ messages, max_completion_tokens: 5, max_tokens: 100 }, settings, 0);
    expect(capped.words).toHaveLength(5);
    expect(capped.finishReason).toBe('length');
  });

  it('stops normally when the cap is not below the answer length', () => {
    for (const cap of [24, 25, 1000]) {
      const completion = simulateCompletion({ messages, max_tokens: cap }, settings, 0);
      expect(completion.words).toHaveLength(24);
      expect(completion.finishReason).toBe('stop');
    }
  });

  it('counts the prompt with the shared estimate', () => {
    const many = [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'abcdefgh' }, { type: 'image_url' }] }];
    expect(simulateCompletion({ messages: many }, settings, 0).promptTokens).toBe(estimateMessagesTokens(many));
    expect(simulateCompletion({ messages }, settings, 0).promptTokens).toBe(3 + 4 + 3);
  });
});

describe('readSimulatorSettings', () => {
  it('defaults', () => {
    expect(readSimulatorSettings({})).toEqual({ latencyMs: 0, chunkDelayMs: 0, outputTokens: 24 });
  });

  it('reads and clamps non-negative integers, ignoring junk', () => {
    expect(readSimulatorSettings({ latency_ms: 250, chunk_delay_ms: 5, output_tokens: 64 })).toEqual({ latencyMs: 250, chunkDelayMs: 5, outputTokens: 64 });
    expect(readSimulatorSettings({ latency_ms: 10_000_000, chunk_delay_ms: 99_999, output_tokens: 1e9 })).toEqual({ latencyMs: 60_000, chunkDelayMs: 10_000, outputTokens: 4096 });
    expect(readSimulatorSettings({ latency_ms: -1, chunk_delay_ms: 1.5, output_tokens: '64' })).toEqual({ latencyMs: 0, chunkDelayMs: 0, outputTokens: 24 });
  });
});
