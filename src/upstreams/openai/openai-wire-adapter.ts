import type { ChatRequest } from '../../ir/chat-request.js';
import type { ChatResponse } from '../../ir/chat-response.js';
import type { EmbeddingRequest, EmbeddingResponse } from '../../ir/embedding.js';
import type { StreamPart } from '../../ir/stream-part.js';
import type { Channel } from '../../domain/records.js';
import type { UpstreamAdapter, UpstreamOperation, UpstreamPassThrough, UpstreamRequest, UpstreamTransport } from '../upstream-adapter.js';
import { openAIWire } from '../../wire/openai/wire.js';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import { convertToOpenAIChatRequest } from './convert-to-openai-chat-request.js';
import { convertToOpenAIEmbeddingRequest } from './convert-to-openai-embedding-request.js';
import { isOpenAIReasoningModel, listedReasoningModels } from './openai-reasoning-model.js';
import { parseOpenAIChatResponse } from './parse-openai-chat-response.js';
import { parseOpenAIChatStream } from './parse-openai-chat-stream.js';
import { parseOpenAIEmbeddingResponse } from './parse-openai-embedding-response.js';
import { sourceVariant, toolsSourceOf } from '../../wire/tools-source.js';
import { jsonWithTail, ToolListCache } from '../tool-list-cache.js';

/** The UTF-8 of `,"tools":[…]` as the translated body writes a caller's tool list, by the caller's bytes of it. */
const translatedTools = new ToolListCache<{ tail: Buffer }>(64, 256 * 1024);

/** The Responses API's `{ "object": "response.input_tokens", "input_tokens": N }` (the only OpenAI token counter). */
function parseOpenAIInputTokens(body: Buffer): number {
  const parsed = JSON.parse(body.toString('utf8')) as { input_tokens?: unknown } | null;
  const count = parsed?.input_tokens;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) throw new Error('the upstream token count has no input_tokens');
  return count;
}

/**
 * Everything that speaks OpenAI's chat-completions wire (OpenAI, OpenAI-compatible providers, Azure OpenAI, the
 * simulator) shares the translated path; each subclass supplies only its URLs, authentication and transport through
 * `buildPassThrough`, and says whether OpenAI's own model rules apply.
 */
export abstract class OpenAIWireAdapter implements UpstreamAdapter {
  readonly wire = openAIWire;

  /**
   * Every OpenAI-wire upstream takes chat and embeddings bodies as they came; the Responses API only where the
   * subclass says the channel serves it.
   */
  readonly passThrough: UpstreamPassThrough = {
    build: (channel, credential, operation, upstreamModel, body) => this.buildPassThrough(channel, credential, operation, upstreamModel, body),
    serves: (channel, operation) => operation.kind === 'chat' || operation.kind === 'embeddings' || this.servesResponsesApi(channel, operation),
  };

  /** An HTTP request carrying an OpenAI-wire `body` to the channel's endpoint of `operation`. */
  abstract buildPassThrough(channel: Channel, credential: string, operation: UpstreamOperation, upstreamModel: string, body: string | Buffer): UpstreamRequest;

  /** Whether the channel serves the Responses API operation itself (`responses`, `responses-input-tokens`); default no. */
  protected servesResponsesApi(_channel: Channel, _operation: UpstreamOperation): boolean {
    return false;
  }
  abstract transport(channel: Channel): UpstreamTransport;

  /**
   * The channel is OpenAI's own service (OpenAI, Azure OpenAI): `reasoning_effort` only for reasoning models,
   * JSON mode only with a prompt that mentions JSON, and base64 embeddings.
   */
  protected abstract isOfficial(channel: Channel): boolean;

  /**
   * The translated chat body, for a provider that needs it changed (presets' quirks); default unchanged. A tool list
   * decoded from a caller's bytes is written as it was for the same bytes before (the conversion to OpenAI's tools
   * reads nothing but the list).
   */
  protected chatBody(_channel: Channel, body: ChatCompletionCreateParamsBase, request: ChatRequest, _upstreamModel: string): string | Buffer {
    const source = toolsSourceOf(request.tools);
    if (source === undefined || body.tools === undefined) return JSON.stringify(body);
    const { tools, ...rest } = body;
    const { tail } = translatedTools.get(source.bytes, sourceVariant(source), () => ({ tail: Buffer.from(`,"tools":${JSON.stringify(tools)}`) }));
    return jsonWithTail(rest, tail);
  }

  buildChatRequest(channel: Channel, credential: string, request: ChatRequest, upstreamModel: string): UpstreamRequest {
    const body = convertToOpenAIChatRequest(request, {
      upstreamModel,
      official: this.isOfficial(channel),
      reasoningModel: isOpenAIReasoningModel(upstreamModel, listedReasoningModels(channel.settings)),
    });
    return this.passThroughChat(channel, credential, request.stream, upstreamModel, this.chatBody(channel, body, request, upstreamModel));
  }

  /** Sends an already-translated chat body (it must not be rewritten again as a caller's pass-through body). */
  protected passThroughChat(channel: Channel, credential: string, stream: boolean, upstreamModel: string, body: string | Buffer): UpstreamRequest {
    return this.buildPassThrough(channel, credential, { kind: 'chat', stream }, upstreamModel, body);
  }

  parseChatResponse(body: Buffer, _request: ChatRequest): ChatResponse {
    return parseOpenAIChatResponse(body);
  }

  parseChatStream(body: AsyncIterable<Buffer>, _request: ChatRequest): AsyncIterable<StreamPart> {
    return parseOpenAIChatStream(body);
  }

  /**
   * OpenAI has no token-counting endpoint for chat completions, so canonical requests are counted locally
   * (src/tokenize); the Responses API's counter answers pass-through counts only.
   */
  readonly countTokens = { parse: parseOpenAIInputTokens };

  readonly embeddings = {
    build: (channel: Channel, credential: string, request: EmbeddingRequest, upstreamModel: string): UpstreamRequest => {
      const body = convertToOpenAIEmbeddingRequest(request, { upstreamModel, base64: this.isOfficial(channel) });
      return this.buildPassThrough(channel, credential, { kind: 'embeddings', batch: request.inputs.length > 1 }, upstreamModel, JSON.stringify(body));
    },
    parse: (body: Buffer, request: EmbeddingRequest): EmbeddingResponse => parseOpenAIEmbeddingResponse(body, request.inputs.length),
  };
}
