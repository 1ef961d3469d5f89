/**
 * Property: a canonical request survives adapter.buildChatRequest (IR → Anthropic wire) → codec.decodeRequest
 * (Anthropic wire → IR).
 *
 * Normalisation (what Anthropic's wire cannot carry, or carries in one canonical way):
 * - conversations are generated in Anthropic's normal form (user first, tool results right after the calls,
 *   never ending on the assistant), which converts one to one; merging and splitting are unit-tested;
 * - the model becomes the upstream model; warnings and extensions are not compared;
 * - tool_choice and parallelToolCalls exist only with tools; `parallelToolCalls: false` alone reads back as
 *   tool_choice auto + false; `true` is Anthropic's default and reads back as absent, as it does beside `none`;
 * - reasoning (a thinking budget) is dropped where Anthropic cannot think: a forced tool choice, or a tool loop
 *   whose last assistant turn does not open with a signed or redacted thinking block;
 * - sampling is only generated without thinking (with thinking it is changed by rule, which is unit-tested).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { anthropicMessagesCodec } from '../../../../src/codecs/anthropic-messages/index.js';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import type { Message } from '../../../../src/ir/message.js';
import { AnthropicAdapter } from '../../../../src/upstreams/anthropic/anthropic-adapter.js';
import type { UpstreamTransport } from '../../../../src/upstreams/upstream-adapter.js';
import { chatRequest } from '../../anthropic/arbitraries.js';
import { channel } from '../../anthropic/helpers.js';

const transport: UpstreamTransport = { send: () => Promise.reject(new Error('not used')) };
const adapter = new AnthropicAdapter(transport);

function lastToolTurnUnsigned(messages: readonly Message[]): boolean {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== 'assistant') continue;
    if (!message.content.some((part) => part.type === 'tool-call')) return false;
    const first = message.content[0];
    return first?.type !== 'reasoning';
  }
  return false;
}

function normalized(original: ChatRequest): Record<string, unknown> {
  const { warnings: _warnings, extensions: _extensions, ...rest } = original;
  const expected: Record<string, unknown> = { ...rest, model: 'claude-upstream' };
  const hasTools = original.tools !== undefined && original.tools.length > 0;
  let toolChoice = hasTools ? original.toolChoice : undefined;
  let parallel = hasTools ? original.parallelToolCalls : undefined;
  if (hasTools && toolChoice === undefined && parallel === false) toolChoice = { kind: 'auto' };
  if (parallel === true || toolChoice?.kind === 'none') parallel = undefined;
  expected.toolChoice = toolChoice;
  expected.parallelToolCalls = parallel;
  const forced = toolChoice?.kind === 'required' || toolChoice?.kind === 'tool';
  if (forced || lastToolTurnUnsigned(original.messages)) expected.reasoning = undefined;
  return expected;
}

describe('request round trip: adapter.buildChatRequest → codec.decodeRequest', () => {
  it('keeps every canonical field Anthropic can carry', () => {
    fc.assert(
      fc.property(chatRequest, (original) => {
        const snapshot = structuredClone(original);
        const upstream = adapter.buildChatRequest(channel(), 'k', original, 'claude-upstream');
        const decoded = anthropicMessagesCodec.decodeRequest(JSON.parse(String(upstream.body ?? '{}')) as Record<string, unknown>, {});
        const { warnings: _warnings, extensions, ...rest } = decoded;
        expect(extensions).toEqual({});
        expect(rest).toEqual(normalized(snapshot));
      }),
      { numRuns: 100 },
    );
  });
});
