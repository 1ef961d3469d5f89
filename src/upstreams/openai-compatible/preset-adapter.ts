import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import type { ChatRequest } from '../../ir/chat-request.js';
import type { Channel } from '../../domain/records.js';
import { joinUrl } from '../openai/openai-adapter.js';
import { openAIMediaCapabilities } from '../openai/openai-media.js';
import { OpenAIWireAdapter } from '../openai/openai-wire-adapter.js';
import type { RerankRequest } from '../../ir/rerank.js';
import { jinaShapedBody, parseJinaShapedAnswer } from '../rerank-answer.js';
import type { UpstreamOperation, UpstreamRequest, UpstreamRerank, UpstreamTransport } from '../upstream-adapter.js';
import { openAIWire } from '../../wire/openai/wire.js';
import { passThroughEndpoint } from '../../wire/wire.js';
import type { OpenAICompatiblePreset, WireBody } from './preset.js';
import { OPENAI_COMPATIBLE_PRESETS, type OpenAICompatiblePresetType } from './presets.js';

function presetOf(channel: Channel): OpenAICompatiblePreset {
  return OPENAI_COMPATIBLE_PRESETS[channel.type as OpenAICompatiblePresetType];
}

function baseUrlOf(channel: Channel): string {
  return channel.baseUrl ?? presetOf(channel).defaultBaseUrl;
}

/** The preset's headers, the channel's own, and the key as a Bearer token (none for a keyless local server). */
function headersOf(channel: Channel, credential: string): Record<string, string> {
  const headers: Record<string, string> = { ...presetOf(channel).headers?.(channel), ...channel.headers };
  if (credential !== '') headers.authorization = `Bearer ${credential}`;
  return headers;
}

/**
 * The OpenAI-compatible providers with a preset (`mistral`, `groq`, `deepseek`, `xai`, `openrouter`, `together`,
 * `fireworks`, `ollama`, `vllm`, `lmstudio`): the OpenAI wire with the preset's base URL, authentication and headers,
 * and its body quirks applied on both the translated and the pass-through path.
 */
export class OpenAICompatiblePresetAdapter extends OpenAIWireAdapter {
  readonly media = openAIMediaCapabilities((channel, credential, path) => ({ url: joinUrl(baseUrlOf(channel), path), headers: headersOf(channel, credential) }));

  /** vLLM, Ollama front ends, Together and other servers that copy Jina's `/v1/rerank` (base `/v1` + `/rerank`). */
  readonly rerank: UpstreamRerank = {
    build: (channel: Channel, credential: string, request: RerankRequest, upstreamModel: string): UpstreamRequest => ({
      url: joinUrl(baseUrlOf(channel), '/rerank'),
      method: 'POST',
      headers: { ...headersOf(channel, credential), 'content-type': 'application/json' },
      body: jinaShapedBody(request, upstreamModel),
    }),
    parse: parseJinaShapedAnswer,
  };

  constructor(private readonly http: UpstreamTransport) {
    super();
  }

  buildPassThrough(channel: Channel, credential: string, operation: UpstreamOperation, upstreamModel: string, body: string | Buffer): UpstreamRequest {
    const preset = presetOf(channel);
    const adjust = preset.adjustChatBody;
    let sent = body;
    const text = operation.kind === 'chat' && adjust !== undefined ? body.toString() : '';
    if (operation.kind === 'chat' && adjust !== undefined && (preset.adjustsWhen === undefined || preset.adjustsWhen.test(text))) {
      const parsed = JSON.parse(text) as WireBody;
      adjust(parsed, { channel, upstreamModel, warnings: null });
      sent = JSON.stringify(parsed);
    }
    return this.#request(channel, credential, operation, sent);
  }

  transport(): UpstreamTransport {
    return this.http;
  }

  protected isOfficial(): boolean {
    return false;
  }

  protected override chatBody(channel: Channel, body: ChatCompletionCreateParamsBase, request: ChatRequest, upstreamModel: string): string {
    presetOf(channel).adjustChatBody?.(body as unknown as WireBody, { channel, upstreamModel, warnings: request.warnings });
    return JSON.stringify(body);
  }

  protected override passThroughChat(channel: Channel, credential: string, stream: boolean, _upstreamModel: string, body: string | Buffer): UpstreamRequest {
    return this.#request(channel, credential, { kind: 'chat', stream }, body);
  }

  #request(channel: Channel, credential: string, operation: UpstreamOperation, body: string | Buffer): UpstreamRequest {
    return {
      url: joinUrl(baseUrlOf(channel), passThroughEndpoint(openAIWire, operation)),
      method: 'POST',
      headers: { ...headersOf(channel, credential), 'content-type': 'application/json' },
      body,
    };
  }
}
