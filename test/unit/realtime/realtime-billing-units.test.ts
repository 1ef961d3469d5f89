/** Realtime usage as the upstream reports it, its cost at audio prices, and client secrets. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeCost } from '../../../src/billing/compute-cost.js';
import { NO_PRICES, type Pricing } from '../../../src/domain/model-records.js';
import { mintClientSecret, readClientSecret } from '../../../src/realtime/client-secret.js';
import { usageOfRealtimeResponse } from '../../../src/realtime/realtime-usage.js';
import { watchedEvent } from '../../../src/realtime/realtime-events.js';

const PRICING: Pricing = {
  ...NO_PRICES,
  inputPerMtokNano: 4_000_000_000n,
  cachedInputPerMtokNano: 400_000_000n,
  outputPerMtokNano: 16_000_000_000n,
  inputAudioPerMtokNano: 32_000_000_000n,
  cachedAudioInputPerMtokNano: 400_000_000n,
  outputAudioPerMtokNano: 64_000_000_000n,
};

describe('usageOfRealtimeResponse', () => {
  it('reads input, cached and audio tokens of response.done usage', () => {
    const usage = usageOfRealtimeResponse({
      total_tokens: 500, input_tokens: 300, output_tokens: 200,
      input_token_details: { text_tokens: 100, audio_tokens: 200, cached_tokens: 150, cached_tokens_details: { text_tokens: 50, audio_tokens: 100 } },
      output_token_details: { text_tokens: 40, audio_tokens: 160 },
    });
    expect(usage).toEqual({
      input: { total: 300, noCache: 150, cacheRead: 150, cacheWrite: 0 },
      output: { total: 200, text: 40, reasoning: 0 },
      audio: { input: 200, cacheRead: 100, output: 160 },
    });
  });

  it('is null without a usage object and never returns counts beyond their totals', () => {
    expect(usageOfRealtimeResponse(null)).toBeNull();
    fc.assert(fc.property(fc.anything(), fc.anything(), fc.anything(), fc.anything(), (input, output, cached, audio) => {
      const usage = usageOfRealtimeResponse({ input_tokens: input, output_tokens: output, input_token_details: { cached_tokens: cached, audio_tokens: audio, cached_tokens_details: { audio_tokens: audio } }, output_token_details: { audio_tokens: audio } });
      if (usage === null) return;
      expect(usage.input.noCache + usage.input.cacheRead).toBe(usage.input.total);
      expect(usage.audio?.input ?? 0).toBeLessThanOrEqual(usage.input.total);
      expect(usage.audio?.cacheRead ?? 0).toBeLessThanOrEqual(usage.input.cacheRead);
      expect(usage.audio?.output ?? 0).toBeLessThanOrEqual(usage.output.total);
    }));
  });
});

describe('computeCost with audio tokens', () => {
  it('bills text, cached text, audio, cached audio and audio output each at its price, rounded up once', () => {
    const usage = usageOfRealtimeResponse({
      input_tokens: 300, output_tokens: 200,
      input_token_details: { audio_tokens: 200, cached_tokens: 150, cached_tokens_details: { audio_tokens: 100 } },
      output_token_details: { audio_tokens: 160 },
    });
    if (usage === null) throw new Error('no usage');
    // text 50 × 4 + cached text 50 × 0.4 + audio 100 × 32 + cached audio 100 × 0.4 + text out 40 × 16 + audio out 160 × 64 (USD per million)
    const perMillion = 50n * 4_000_000_000n + 50n * 400_000_000n + 100n * 32_000_000_000n + 100n * 400_000_000n + 40n * 16_000_000_000n + 160n * 64_000_000_000n;
    expect(computeCost(PRICING, { tokens: usage })).toBe((perMillion + 999_999n) / 1_000_000n);
  });

  it('bills audio at the text prices when the model has no audio prices', () => {
    const usage = usageOfRealtimeResponse({ input_tokens: 100, output_tokens: 10, input_token_details: { audio_tokens: 100 }, output_token_details: { audio_tokens: 10 } });
    if (usage === null) throw new Error('no usage');
    const textOnly: Pricing = { ...NO_PRICES, inputPerMtokNano: 1_000_000_000n, outputPerMtokNano: 2_000_000_000n };
    expect(computeCost(textOnly, { tokens: usage })).toBe(120_000n);
  });
});

describe('client secrets', () => {
  const key = Buffer.alloc(32, 9);
  const grant = { keyId: 'key_1', model: 'voice', expiresAt: 2_000_000, sessionId: 'sess_1', session: { instructions: 'hi' } };

  it('reads back what was minted until it expires', () => {
    const secret = mintClientSecret(key, grant);
    expect(readClientSecret(key, secret, 1_000_000)).toEqual(grant);
    expect(readClientSecret(key, secret, 2_000_000)).toBe('expired');
    expect(readClientSecret(Buffer.alloc(32, 8), secret, 1_000_000)).toBe('invalid');
  });

  it('refuses any altered secret', () => {
    const secret = mintClientSecret(key, grant);
    fc.assert(fc.property(fc.nat({ max: secret.length - 1 }), fc.string({ minLength: 1, maxLength: 1 }), (at, char) => {
      const altered = secret.slice(0, at) + char + secret.slice(at + 1);
      if (altered === secret) return;
      expect(readClientSecret(key, altered, 1_000_000)).toBe('invalid');
    }));
  });
});

describe('watchedEvent', () => {
  it('parses only frames naming a watched type', () => {
    expect(watchedEvent(Buffer.from('{"type":"response.output_audio.delta","delta":"AAAA"}'))).toBeNull();
    expect(watchedEvent(Buffer.from('{"type":"response.done","response":{"status":"cancelled","usage":{"input_tokens":1}}}'))).toEqual({ type: 'response.done', status: 'cancelled', usage: { input_tokens: 1 } });
    expect(watchedEvent(Buffer.from('{"type":"response.created"}'))).toEqual({ type: 'response.created' });
    expect(watchedEvent(Buffer.from('{"type":"response.done" broken'))).toBeNull();
  });
});
