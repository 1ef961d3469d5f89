/** Gemini Live's usage metadata as canonical usage, what the dialect reads off a server message, and the upstream URL. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { usageOfLiveMetadata } from '../../../src/realtime/gemini-live-usage.js';
import { geminiLiveDialect } from '../../../src/realtime/gemini-live-dialect.js';
import { geminiLiveTarget, geminiLiveVersion } from '../../../src/realtime/gemini-live-upstream.js';
import { closeReasonText } from '../../../src/realtime/realtime-dialect.js';
import type { Channel } from '../../../src/domain/records.js';

describe('usageOfLiveMetadata', () => {
  it('keeps audio apart by modality and bills thinking as output', () => {
    const usage = usageOfLiveMetadata({
      promptTokenCount: 522, cachedContentTokenCount: 100, responseTokenCount: 42, thoughtsTokenCount: 136, totalTokenCount: 564,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: 332 }, { modality: 'AUDIO', tokenCount: 165 }],
      cacheTokensDetails: [{ modality: 'AUDIO', tokenCount: 60 }, { modality: 'TEXT', tokenCount: 40 }],
      responseTokensDetails: [{ modality: 'AUDIO', tokenCount: 42 }],
    });
    expect(usage).toEqual({
      input: { total: 522, noCache: 422, cacheRead: 100, cacheWrite: 0 },
      output: { total: 178, text: 0, reasoning: 136 },
      audio: { input: 165, cacheRead: 60, output: 42 },
    });
  });

  it('reads the older candidatesTokenCount, adds tool-use prompt tokens, and leaves audio out when there is none', () => {
    expect(usageOfLiveMetadata({ promptTokenCount: 10, toolUsePromptTokenCount: 5, candidatesTokenCount: 7 })).toEqual({
      input: { total: 15, noCache: 15, cacheRead: 0, cacheWrite: 0 },
      output: { total: 7, text: 7, reasoning: 0 },
    });
    expect(usageOfLiveMetadata(null)).toBeNull();
    expect(usageOfLiveMetadata([])).toBeNull();
  });

  it('never returns counts beyond their totals, whatever the upstream sends', () => {
    const count = fc.oneof(fc.integer({ min: -5, max: 10_000 }), fc.constant(undefined), fc.double(), fc.string());
    const details = fc.array(fc.record({ modality: fc.constantFrom('TEXT', 'AUDIO', 'IMAGE'), tokenCount: count }), { maxLength: 4 });
    fc.assert(fc.property(fc.record({ promptTokenCount: count, cachedContentTokenCount: count, responseTokenCount: count, thoughtsTokenCount: count, promptTokensDetails: details, cacheTokensDetails: details, responseTokensDetails: details }), (metadata) => {
      const usage = usageOfLiveMetadata(metadata);
      if (usage === null) return false;
      const audio = usage.audio ?? { input: 0, cacheRead: 0, output: 0 };
      return usage.input.cacheRead <= usage.input.total && usage.input.noCache >= 0 && audio.input <= usage.input.total
        && audio.cacheRead <= Math.min(audio.input, usage.input.cacheRead) && audio.output <= usage.output.total && usage.output.text >= 0;
    }));
  });
});

describe('geminiLiveDialect', () => {
  it('reads a turn starting and its usage from text or binary frames, and nothing from the rest', () => {
    expect(geminiLiveDialect.watch(Buffer.from('{"serverContent":{"modelTurn":{"parts":[{"text":"hi"}]}}}'), true)).toEqual({ kind: 'response-started' });
    expect(geminiLiveDialect.watch(Buffer.from('{"toolCall":{"functionCalls":[]}}'), false)).toEqual({ kind: 'response-started' });
    expect(geminiLiveDialect.watch(Buffer.from('{"serverContent":{"turnComplete":true}}'), true)).toBeNull();
    expect(geminiLiveDialect.watch(Buffer.from('{"setupComplete":{}}'), true)).toBeNull();
    // A user's words quoting the key are not a usage report.
    expect(geminiLiveDialect.watch(Buffer.from('{"serverContent":{"inputTranscription":{"text":"say \\"usageMetadata\\""}}}'), true)).toBeNull();
    expect(geminiLiveDialect.watch(Buffer.from('{"serverContent":{"turnComplete":true,"interrupted":true},"usageMetadata":{"promptTokenCount":3,"responseTokenCount":2}}'), true)).toEqual({
      kind: 'response-done',
      status: 'cancelled',
      usage: { input: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, output: { total: 2, text: 2, reasoning: 0 } },
    });
  });

  it('ends a session with the reason as close text (cut to 123 bytes) and announces a drain with goAway', () => {
    expect(geminiLiveDialect.errorFrame({ type: 'server_error', code: 'x', message: 'm' })).toBeNull();
    const reason = geminiLiveDialect.closeReason({ type: 'invalid_request_error', code: 'insufficient_balance', message: 'é'.repeat(200) }, '');
    expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(123);
    expect(closeReasonText('short')).toBe('short');
    expect(JSON.parse(geminiLiveDialect.drainNotice(9500) ?? '')).toEqual({ goAway: { timeLeft: '9s' } });
  });
});

describe('the Gemini Live upstream URL', () => {
  const channel = (baseUrl: string | null, settings: Record<string, unknown> = {}): Channel => ({ baseUrl, settings, headers: { 'x-extra': '1' } }) as unknown as Channel;

  it('is Google\'s path under the channel base, in the caller\'s version unless the channel names one, with the key in a header', () => {
    expect(geminiLiveTarget(channel(null), 'k', 'v1')).toEqual({ url: 'wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent', headers: { 'x-extra': '1', 'x-goog-api-key': 'k' } });
    expect(geminiLiveTarget(channel('http://proxy:8080/v1alpha/'), 'k', 'v1').url).toBe('ws://proxy:8080/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContent');
    expect(geminiLiveTarget(channel('https://proxy', { api_version: 'v1beta' }), 'k', 'v1').url).toBe('wss://proxy/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent');
  });

  it('serves the path with one or two leading slashes, in each API version', () => {
    expect(geminiLiveVersion('/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent')).toBe('v1beta');
    expect(geminiLiveVersion('//ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContent')).toBe('v1alpha');
    expect(geminiLiveVersion('/ws/google.ai.generativelanguage.v2.GenerativeService.BidiGenerateContent')).toBeNull();
    expect(geminiLiveVersion('/v1/realtime')).toBeNull();
  });
});
