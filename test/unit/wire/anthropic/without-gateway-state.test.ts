import { describe, expect, it } from 'vitest';
import { withoutGatewayThinking } from '../../../../src/wire/anthropic/without-gateway-state.js';
import { restoreCarriedSignatures } from '../../../../src/codecs/carried-signature.js';

const carrier = { type: 'thinking', thinking: '', signature: 'ugw1.n.R2VtaW5p' };
const own = { type: 'thinking', thinking: 'mine', signature: 'EoAnthropic' };
const call = { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } };
const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' }] };
const question = { role: 'user', content: 'Weather?' };

describe('withoutGatewayThinking: an Anthropic body without the thinking blocks the gateway made', () => {
  it('returns the body itself when it holds none', () => {
    const body = { model: 'm', messages: [question, { role: 'assistant', content: [own, call] }, result], thinking: { type: 'enabled', budget_tokens: 1024 } };
    expect(withoutGatewayThinking(body)).toBe(body);
  });

  it('leaves out the carriers only, Anthropic\'s thinking and redacted thinking untouched, the caller\'s body unchanged', () => {
    const redacted = { type: 'redacted_thinking', data: 'ugw1.looks-alike-but-is-data' };
    const earlier = { role: 'assistant', content: [carrier, { type: 'text', text: 'Hello' }] };
    const body = { model: 'm', messages: [question, earlier, { role: 'user', content: 'Again' }, { role: 'assistant', content: [own, redacted, call] }, result] };
    const copy = structuredClone(body);
    const out = withoutGatewayThinking(body);
    expect(out.messages).toEqual([question, { role: 'assistant', content: [{ type: 'text', text: 'Hello' }] }, { role: 'user', content: 'Again' }, { role: 'assistant', content: [own, redacted, call] }, result]);
    expect(body).toEqual(copy);
    // Unchanged messages are the caller's own objects.
    expect((out.messages as unknown[])[3]).toBe(body.messages[3]);
  });

  it('turns manual thinking off, with the context edits that need it, when the last tool turn lost its opening thinking', () => {
    const body = {
      model: 'm',
      messages: [question, { role: 'assistant', content: [carrier, call] }, result],
      thinking: { type: 'enabled', budget_tokens: 1024 },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }, { type: 'clear_tool_uses_20250919' }] },
    };
    const out = withoutGatewayThinking(body);
    expect(out.thinking).toBeUndefined();
    expect(out.context_management).toEqual({ edits: [{ type: 'clear_tool_uses_20250919' }] });
    const onlyThinkingEdits = withoutGatewayThinking({ ...body, context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] } });
    expect(onlyThinkingEdits).not.toHaveProperty('context_management');
  });

  it('keeps thinking on when it is adaptive, when the turn still opens with Anthropic\'s thinking, or when the carrier was in an earlier turn', () => {
    const adaptive = { model: 'm', messages: [question, { role: 'assistant', content: [carrier, call] }, result], thinking: { type: 'adaptive' } };
    expect(withoutGatewayThinking(adaptive).thinking).toEqual({ type: 'adaptive' });
    const ownFirst = { model: 'm', messages: [question, { role: 'assistant', content: [own, carrier, call] }, result], thinking: { type: 'enabled', budget_tokens: 1024 } };
    expect(withoutGatewayThinking(ownFirst).thinking).toEqual(ownFirst.thinking);
    const earlier = {
      model: 'm',
      messages: [question, { role: 'assistant', content: [carrier, call] }, result, { role: 'assistant', content: [own, { ...call, id: 'toolu_2' }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'Rain' }] }],
      thinking: { type: 'enabled', budget_tokens: 1024 },
    };
    expect(withoutGatewayThinking(earlier).thinking).toEqual(earlier.thinking);
  });
});

describe('restoreCarriedSignatures', () => {
  it('drops a gateway-marked signature it cannot place, keeping the thoughts', () => {
    expect(restoreCarriedSignatures([{ type: 'reasoning', text: 'thoughts', signature: 'ugw1.g.R2VtaW5p' }, { type: 'text', text: 'Hi' }])).toEqual([{ type: 'reasoning', text: 'thoughts' }, { type: 'text', text: 'Hi' }]);
    expect(restoreCarriedSignatures([{ type: 'reasoning', text: '', signature: 'ugw1.x.future' }, { type: 'text', text: 'Hi' }])).toEqual([{ type: 'text', text: 'Hi' }]);
  });
});
