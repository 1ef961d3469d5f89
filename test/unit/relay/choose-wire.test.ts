import { describe, expect, it } from 'vitest';
import { anthropicMessagesCodec } from '../../../src/codecs/anthropic-messages/index.js';
import { geminiCodec, geminiCodecFor } from '../../../src/codecs/gemini/index.js';
import { openAIChatCodec } from '../../../src/codecs/openai-chat/index.js';
import { openAIResponsesCodec } from '../../../src/codecs/openai-responses/index.js';
import { chooseWire } from '../../../src/relay/choose-wire.js';
import type { ClientCodec } from '../../../src/codecs/client-codec.js';
import type { Channel } from '../../../src/domain/records.js';
import type { UpstreamAdapter } from '../../../src/upstreams/upstream-adapter.js';
import { anthropicWire } from '../../../src/wire/anthropic/wire.js';
import { bedrockConverseWire } from '../../../src/wire/bedrock/wire.js';
import { geminiWire } from '../../../src/wire/gemini/wire.js';
import { openAIWire } from '../../../src/wire/openai/wire.js';
import { responsesWire } from '../../../src/wire/responses/wire.js';
import { vertexAIWire } from '../../../src/wire/vertex-ai/wire.js';
import type { UpstreamOperation, Wire } from '../../../src/wire/wire.js';

const channel = { id: 'ch_test', settings: {} } as unknown as Channel;

const build = (): never => {
  throw new Error('not built in this test');
};

/** An adapter of `wire` that passes bodies through, asking `serves` per operation when given; none for upstream-only wires. */
function adapterOf(wire: Wire, serves?: (operation: UpstreamOperation) => boolean): UpstreamAdapter {
  if (wire === bedrockConverseWire || wire === vertexAIWire) return { wire } as unknown as UpstreamAdapter;
  return { wire, passThrough: { build, ...(serves === undefined ? {} : { serves: (_channel: Channel, operation: UpstreamOperation) => serves(operation) }) } } as unknown as UpstreamAdapter;
}

/** OpenAI's own channels: chat and embeddings, and the Responses API. */
const openAI = adapterOf(openAIWire, () => true);

describe('chooseWire', () => {
  it('passes a chat request through to an adapter of the caller protocol, with the chat operation', () => {
    expect(chooseWire(openAI, channel, { kind: 'chat', codec: openAIChatCodec, stream: true })).toEqual({ kind: 'pass-through', operation: { kind: 'chat', stream: true }, codec: openAIChatCodec.passThrough });
    expect(chooseWire(adapterOf(anthropicWire), channel, { kind: 'chat', codec: anthropicMessagesCodec, stream: false })).toEqual({ kind: 'pass-through', operation: { kind: 'chat', stream: false }, codec: anthropicMessagesCodec.passThrough });
  });

  it('translates for an adapter of another protocol and for upstream-only wires', () => {
    expect(chooseWire(adapterOf(anthropicWire), channel, { kind: 'chat', codec: openAIChatCodec, stream: true })).toEqual({ kind: 'translate' });
    expect(chooseWire(adapterOf(bedrockConverseWire), channel, { kind: 'chat', codec: anthropicMessagesCodec, stream: true })).toEqual({ kind: 'translate' });
    expect(chooseWire(adapterOf(vertexAIWire), channel, { kind: 'count-tokens', wire: geminiWire })).toEqual({ kind: 'translate' });
  });

  it("rebuilds Gemini's JSON-array stream from canonical parts, while its SSE stream and whole answers pass through", () => {
    const gemini = adapterOf(geminiWire);
    expect(chooseWire(gemini, channel, { kind: 'chat', codec: geminiCodecFor({ sse: false }), stream: true })).toEqual({ kind: 'translate' });
    expect(chooseWire(gemini, channel, { kind: 'chat', codec: geminiCodec, stream: true }).kind).toBe('pass-through');
    expect(chooseWire(gemini, channel, { kind: 'chat', codec: geminiCodecFor({ sse: false }), stream: false }).kind).toBe('pass-through');
  });

  it('passes the Responses API through only to channels that serve it natively', () => {
    const codec = openAIResponsesCodec({});
    expect(chooseWire(openAI, channel, { kind: 'chat', codec, stream: true })).toEqual({ kind: 'pass-through', operation: { kind: 'responses', stream: true }, codec: codec.passThrough });
    expect(chooseWire(adapterOf(openAIWire, (operation) => operation.kind === 'chat'), channel, { kind: 'chat', codec, stream: true })).toEqual({ kind: 'translate' });
    expect(chooseWire(adapterOf(openAIWire, (operation) => operation.kind === 'chat' || operation.kind === 'embeddings'), channel, { kind: 'chat', codec, stream: false })).toEqual({ kind: 'translate' });
    expect(chooseWire(adapterOf(anthropicWire), channel, { kind: 'chat', codec, stream: false })).toEqual({ kind: 'translate' });
  });

  it('translates an operation the upstream wire has no endpoint for, or the caller wire does not pass through', () => {
    // OpenAI's wire has no token counter; the Responses wire has no embeddings.
    expect(chooseWire(openAI, channel, { kind: 'count-tokens', wire: openAIWire })).toEqual({ kind: 'translate' });
    expect(chooseWire(openAI, channel, { kind: 'embeddings', wire: responsesWire, batch: false })).toEqual({ kind: 'translate' });
    expect(chooseWire(adapterOf(anthropicWire), channel, { kind: 'embeddings', wire: anthropicWire, batch: false })).toEqual({ kind: 'translate' });
  });

  it('translates the chat of a codec that declares no pass-through part, even to an adapter of its own wire', () => {
    // A whole codec with no pass-through part is a ClientCodec as it stands: the part is optional.
    const { passThrough: _forwarding, ...withoutPassThrough } = openAIChatCodec;
    const translatedOnly: ClientCodec = withoutPassThrough;
    expect(chooseWire(openAI, channel, { kind: 'chat', codec: translatedOnly, stream: false })).toEqual({ kind: 'translate' });
    expect(chooseWire(openAI, channel, { kind: 'chat', codec: translatedOnly, stream: true })).toEqual({ kind: 'translate' });
  });

  it('chooses for embeddings and token counts by the same rule', () => {
    expect(chooseWire(openAI, channel, { kind: 'embeddings', wire: openAIWire, batch: true })).toEqual({ kind: 'pass-through', operation: { kind: 'embeddings', batch: true } });
    expect(chooseWire(adapterOf(geminiWire), channel, { kind: 'embeddings', wire: openAIWire, batch: true })).toEqual({ kind: 'translate' });
    expect(chooseWire(adapterOf(anthropicWire), channel, { kind: 'count-tokens', wire: anthropicWire })).toEqual({ kind: 'pass-through', operation: { kind: 'count-tokens' } });
    expect(chooseWire(openAI, channel, { kind: 'count-tokens', wire: responsesWire })).toEqual({ kind: 'pass-through', operation: { kind: 'responses-input-tokens' } });
    expect(chooseWire(adapterOf(geminiWire), channel, { kind: 'count-tokens', wire: responsesWire })).toEqual({ kind: 'translate' });
  });
});
