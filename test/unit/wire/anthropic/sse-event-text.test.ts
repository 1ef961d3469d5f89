import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contentBlockDeltaEvent, contentBlockStopEvent, MESSAGE_STOP_EVENT, sseEvent } from '../../../../src/wire/anthropic/anthropic-wire.js';

const FIELDS = { text_delta: 'text', input_json_delta: 'partial_json', thinking_delta: 'thinking', signature_delta: 'signature' } as const;
const index = fc.oneof(fc.constant(null), fc.nat(), fc.integer());
// Any UTF-16 text: lone surrogates, control characters, quotes and backslashes included.
const value = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u2028', '\ud800', 'a', '\u0000') }));

describe('Anthropic SSE events written as text', () => {
  it('property: a content block delta is the text sseEvent writes for the same event', () => {
    fc.assert(fc.property(index, fc.constantFrom(...(Object.keys(FIELDS) as (keyof typeof FIELDS)[])), value, (at, type, text) => {
      const expected = sseEvent('content_block_delta', { type: 'content_block_delta', index: at, delta: { type, [FIELDS[type]]: text } });
      expect(contentBlockDeltaEvent(at, type, text)).toBe(expected);
    }), { numRuns: 3000 });
  });

  it('property: a content block stop and the message stop are the text sseEvent writes', () => {
    fc.assert(fc.property(index, (at) => {
      expect(contentBlockStopEvent(at)).toBe(sseEvent('content_block_stop', { type: 'content_block_stop', index: at }));
    }));
    expect(MESSAGE_STOP_EVENT).toBe(sseEvent('message_stop', { type: 'message_stop' }));
  });
});
