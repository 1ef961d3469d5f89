import { createHash } from 'node:crypto';
import { estimateMessagesTokens } from '../../shared/estimate-tokens.js';

const WORDS = ['the', 'gateway', 'simulator', 'answers', 'with', 'deterministic', 'text', 'so', 'demos', 'benchmarks',
  'and', 'load', 'tests', 'run', 'without', 'credentials', 'every', 'reply', 'is', 'synthetic'];

export interface SimulatorSettings {
  /** Delay before the first byte. */
  latencyMs: number;
  /** Delay between streamed chunks. */
  chunkDelayMs: number;
  /** Completion length in tokens (one word a token) unless max_tokens is lower. */
  outputTokens: number;
}

export function readSimulatorSettings(settings: Record<string, unknown>): SimulatorSettings {
  const number = (name: string, fallback: number, max: number): number => {
    const value = settings[name];
    return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? Math.min(value, max) : fallback;
  };
  return {
    latencyMs: number('latency_ms', 0, 60_000),
    chunkDelayMs: number('chunk_delay_ms', 0, 10_000),
    outputTokens: number('output_tokens', 24, 4096),
  };
}

export interface SimulatedCompletion {
  id: string;
  created: number;
  words: string[];
  promptTokens: number;
  finishReason: 'stop' | 'length';
}

/** The same request always yields the same words; the first sentence says that this is a simulation. */
export function simulateCompletion(body: Record<string, unknown>, settings: SimulatorSettings, now: number): SimulatedCompletion {
  const digest = createHash('sha256').update(JSON.stringify(body.messages ?? null)).digest();
  const preamble = ['[simulated', 'response', 'from', 'the', 'gateway', 'simulator]'];
  const words = [...preamble];
  for (let index = 0; words.length < Math.max(settings.outputTokens, preamble.length); index += 1) {
    words.push(WORDS[(digest[index % digest.length] ?? 0) % WORDS.length] as string);
  }
  const cap = [body.max_completion_tokens, body.max_tokens].find((value): value is number => typeof value === 'number');
  const truncated = cap !== undefined && cap < words.length;
  return {
    id: `chatcmpl-sim${digest.subarray(0, 12).toString('hex')}`,
    created: Math.floor(now / 1000),
    words: truncated ? words.slice(0, Math.max(cap, 0)) : words,
    promptTokens: estimateMessagesTokens(body.messages),
    finishReason: truncated ? 'length' : 'stop',
  };
}
