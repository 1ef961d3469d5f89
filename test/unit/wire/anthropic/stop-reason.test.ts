import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ANTHROPIC_STOP_REASONS, type AnthropicStopReason } from '../../../../src/wire/anthropic/anthropic-wire.js';
import { anthropicStopReason, finishReasonFromAnthropic } from '../../../../src/wire/anthropic/stop-reason.js';
import { foreignFinishReason } from '../usage-arbitraries.js';

const stopReasons = [...ANTHROPIC_STOP_REASONS] as AnthropicStopReason[];

describe('Anthropic stop reasons', () => {
  it('wire → canonical → wire gives back every stop reason Anthropic defines', () => {
    fc.assert(
      fc.property(fc.constantFrom(...stopReasons), (stopReason) => {
        const reason = finishReasonFromAnthropic(stopReason);
        expect(reason.raw).toBe(stopReason);
        expect(anthropicStopReason(reason, stopReason === 'tool_use')).toBe(stopReason);
      }),
    );
  });

  it('canonical → wire → canonical keeps the unified reason where Anthropic has one', () => {
    fc.assert(
      fc.property(foreignFinishReason, fc.boolean(), (reason, hasToolCalls) => {
        const back = finishReasonFromAnthropic(anthropicStopReason(reason, hasToolCalls)).unified;
        if (hasToolCalls && reason.unified !== 'length' && reason.unified !== 'content-filter' && reason.unified !== 'error') {
          expect(back).toBe('tool-calls');
        } else if (reason.unified === 'error' || reason.unified === 'other') {
          expect(back).toBe('stop');
        } else {
          expect(back).toBe(reason.unified);
        }
      }),
    );
  });

  it('keeps an unknown raw value and reads it as other', () => {
    fc.assert(
      fc.property(fc.string(), (raw) => {
        fc.pre(!ANTHROPIC_STOP_REASONS.has(raw));
        expect(finishReasonFromAnthropic(raw)).toEqual({ unified: 'other', raw });
      }),
    );
  });
});
