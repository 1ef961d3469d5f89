import { describe, expect, it } from 'vitest';
import { anthropicMessagesCodec } from '../../../src/codecs/anthropic-messages/index.js';
import { geminiCodec } from '../../../src/codecs/gemini/index.js';
import { openAIChatCodec } from '../../../src/codecs/openai-chat/index.js';
import { openAIResponsesCodec } from '../../../src/codecs/openai-responses/index.js';
import { chooseWire } from '../../../src/relay/choose-wire.js';
import type { Channel } from '../../../src/domain/records.js';
import type { UpstreamAdapter } from '../../../src/upstreams/upstream-adapter.js';
import type { UpstreamOnlyProtocol, UpstreamOperation, WireProtocol } from '../../../src/wire/protocols.js';

const channel = { id: 'ch_test', settings: {} } as unknown as Channel;

/** An adapter of `protocol` that serves the Responses API natively when `native` says so. */
function adapterOf(protocol: WireProtocol | UpstreamOnlyProtocol, native?: (operation: UpstreamOperation) => boolean): UpstreamAdapter {
  return { protocol, ...(native === undefined ? {} : { servesPassThrough: (_channel: Channel, operation: UpstreamOperation) => native(operation) }) } as unknown as UpstreamAdapter;
}

const openAI = adapterOf('openai-chat', (operation) => operation.kind === 'responses' || operation.kind === 'responses-input-tokens');

describe('chooseWire', () => {
  it('passes a chat request through to an adapter of the caller protocol, with the chat operation', () => {
    expect(chooseWire(openAI, channel, { kind: 'chat', codec: openAIChatCodec, stream: true, sse: true })).toEqual({ kind: 'pass-through', operation: { kind: 'chat', stream: true } });
    expect(chooseWire(adapterOf('anthropic-messages'), channel, { kind: 'chat', codec: anthropicMessagesCodec, stream: false, sse: true })).toEqual({ kind: 'pass-through', operation: { kind: 'chat', stream: false } });
  });

  it('translates for an adapter of another protocol and for upstream-only wires', () => {
    expect(chooseWire(adapterOf('anthropic-messages'), channel, { kind: 'chat', codec: openAIChatCodec, stream: true, sse: true })).toEqual({ kind: 'translate' });
    expect(chooseWire(adapterOf('bedrock-converse'), channel, { kind: 'chat', codec: anthropicMessagesCodec, stream: true, sse: true })).toEqual({ kind: 'translate' });
    expect(chooseWire(adapterOf('vertex-ai'), channel, { kind: 'count-tokens', protocol: 'gemini' })).toEqual({ kind: 'translate' });
  });

  it("rebuilds Gemini's JSON-array stream from canonical parts, while its SSE stream and whole answers pass through", () => {
    const gemini = adapterOf('gemini');
    expect(chooseWire(gemini, channel, { kind: 'chat', codec: geminiCodec, stream: true, sse: false })).toEqual({ kind: 'translate' });
    expect(chooseWire(gemini, channel, { kind: 'chat', codec: geminiCodec, stream: true, sse: true }).kind).toBe('pass-through');
    expect(chooseWire(gemini, channel, { kind: 'chat', codec: geminiCodec, stream: false, sse: false }).kind).toBe('pass-through');
  });

  it('passes the Responses API through only to channels that serve it natively', () => {
    const codec = openAIResponsesCodec({});
    expect(chooseWire(openAI, channel, { kind: 'chat', codec, stream: true, sse: true })).toEqual({ kind: 'pass-through', operation: { kind: 'responses', stream: true } });
    expect(chooseWire(adapterOf('openai-chat', () => false), channel, { kind: 'chat', codec, stream: true, sse: true })).toEqual({ kind: 'translate' });
    expect(chooseWire(adapterOf('openai-chat'), channel, { kind: 'chat', codec, stream: false, sse: true })).toEqual({ kind: 'translate' });
    expect(chooseWire(adapterOf('anthropic-messages'), channel, { kind: 'chat', codec, stream: false, sse: true })).toEqual({ kind: 'translate' });
  });

  it('chooses for embeddings and token counts by the same rule', () => {
    expect(chooseWire(openAI, channel, { kind: 'embeddings', protocol: 'openai-chat', batch: true })).toEqual({ kind: 'pass-through', operation: { kind: 'embeddings', batch: true } });
    expect(chooseWire(adapterOf('gemini'), channel, { kind: 'embeddings', protocol: 'openai-chat', batch: true })).toEqual({ kind: 'translate' });
    expect(chooseWire(adapterOf('anthropic-messages'), channel, { kind: 'count-tokens', protocol: 'anthropic-messages' })).toEqual({ kind: 'pass-through', operation: { kind: 'count-tokens' } });
    expect(chooseWire(openAI, channel, { kind: 'count-tokens', protocol: 'openai-responses' })).toEqual({ kind: 'pass-through', operation: { kind: 'responses-input-tokens' } });
    expect(chooseWire(adapterOf('gemini'), channel, { kind: 'count-tokens', protocol: 'openai-responses' })).toEqual({ kind: 'translate' });
  });
});
