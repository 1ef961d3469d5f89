import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeOpenAIFinishReason, mapOpenAIFinishReason, type OpenAIFinishReason } from '../../../../src/wire/openai/finish-reason.js';
import { foreignFinishReason } from '../usage-arbitraries.js';

const WIRE_REASONS: OpenAIFinishReason[] = ['stop', 'length', 'tool_calls', 'content_filter'];

describe('OpenAI finish reasons', () => {
  it('wire → canonical → wire gives back every finish_reason the gateway writes', () => {
    fc.assert(
      fc.property(fc.constantFrom(...WIRE_REASONS), (wire) => {
        const hasToolCalls = wire === 'tool_calls';
        const reason = mapOpenAIFinishReason(wire, hasToolCalls);
        expect(reason.raw).toBe(wire);
        expect(encodeOpenAIFinishReason(reason, hasToolCalls)).toBe(wire);
      }),
    );
  });

  it('canonical → wire → canonical keeps the unified reason where OpenAI has one; tool calls always read as tool-calls', () => {
    fc.assert(
      fc.property(foreignFinishReason, fc.boolean(), (reason, hasToolCalls) => {
        const back = mapOpenAIFinishReason(encodeOpenAIFinishReason(reason, hasToolCalls), hasToolCalls).unified;
        if (reason.unified === 'length' || reason.unified === 'content-filter') expect(back).toBe(reason.unified);
        else if (hasToolCalls || reason.unified === 'tool-calls') expect(back).toBe('tool-calls');
        else expect(back).toBe('stop');
      }),
    );
  });

  it('reads the legacy function_call as tool-calls and keeps unknown raw values', () => {
    expect(mapOpenAIFinishReason('function_call', false)).toEqual({ unified: 'tool-calls', raw: 'function_call' });
    fc.assert(
      fc.property(fc.string(), fc.boolean(), (raw, hasToolCalls) => {
        fc.pre(!['stop', 'length', 'tool_calls', 'function_call', 'content_filter'].includes(raw));
        expect(mapOpenAIFinishReason(raw, hasToolCalls)).toEqual({ unified: hasToolCalls ? 'tool-calls' : 'other', raw });
      }),
    );
  });
});
