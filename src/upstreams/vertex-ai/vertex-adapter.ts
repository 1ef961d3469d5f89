import type { ChatRequest } from '../../ir/chat-request.js';
import type { ChatResponse } from '../../ir/chat-response.js';
import type { StreamPart } from '../../ir/stream-part.js';
import type { Clock } from '../../shared/clock.js';
import type { Channel } from '../../domain/records.js';
import { anthropicBodyOptions } from '../anthropic/anthropic-adapter.js';
import { buildAnthropicBody } from '../anthropic/build-request-body.js';
import { parseAnthropicResponse } from '../anthropic/parse-response.js';
import { parseAnthropicStream } from '../anthropic/parse-stream.js';
import { AuthorizingTransport } from '../authorizing-transport.js';
import { buildGenerateContentBody, readGeminiSettings } from '../gemini/build-generate-content-body.js';
import { classifyGeminiError } from '../gemini/classify-error.js';
import { parseGenerateContentResponse } from '../gemini/parse-response.js';
import { parseGeminiStream } from '../gemini/parse-stream.js';
import type { RerankRequest } from '../../ir/rerank.js';
import type { UpstreamAdapter, UpstreamErrorClass, UpstreamRequest, UpstreamRerank, UpstreamTransport } from '../upstream-adapter.js';
import { AccessTokenCache } from './access-token-cache.js';
import { serviceAccountOf } from './service-account.js';
import { isAnthropicAnswer, isAnthropicStream, peekStream } from './sniff-answer.js';
import { publisherOf, vertexUrl } from './vertex-endpoint.js';
import { parseVertexRerank, vertexRerankBody, vertexRerankUrl } from './vertex-rerank.js';
import { vertexAIWire } from '../../wire/vertex-ai/wire.js';

/** The Messages API version Anthropic's models on Vertex AI take, in the body instead of a header. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

async function* parseVertexStream(body: AsyncIterable<Buffer>, request: ChatRequest): AsyncIterable<StreamPart> {
  const { head, stream } = await peekStream(body);
  yield* isAnthropicStream(head) ? parseAnthropicStream(stream) : parseGeminiStream(stream, request);
}

/**
 * Google Vertex AI (channel type `vertex-ai`) with a service-account key: Gemini models through
 * `publishers/google/models/{m}:generateContent|streamGenerateContent`, Claude models through
 * `publishers/anthropic/models/{m}:rawPredict|streamRawPredict` (the Messages body with `anthropic_version` and no
 * model), chosen by the upstream model. The OAuth access token is fetched and cached per key, and renewed once when
 * Vertex refuses it. Requests are always translated, so the wire code of the Gemini and Anthropic adapters serves.
 * Rerank models go to Vertex AI Search's ranking API (`rankingConfigs/default_ranking_config:rank`) with the same
 * token. It serves no embeddings, and tokens are counted locally.
 */
export class VertexAIAdapter implements UpstreamAdapter {
  readonly wire = vertexAIWire;
  readonly #transport: UpstreamTransport;
  readonly #tokens: AccessTokenCache;

  constructor(http: UpstreamTransport, clock: Clock) {
    this.#transport = new AuthorizingTransport(http);
    this.#tokens = new AccessTokenCache(http, clock);
  }

  readonly rerank: UpstreamRerank = {
    build: (channel: Channel, credential: string, request: RerankRequest, upstreamModel: string): UpstreamRequest => {
      const account = serviceAccountOf(credential);
      return this.authorized(channel, credential, vertexRerankUrl(channel, account), vertexRerankBody(request, upstreamModel));
    },
    parse: parseVertexRerank,
  };

  transport(): UpstreamTransport {
    return this.#transport;
  }

  classifyError(status: number, body: Buffer): UpstreamErrorClass {
    return classifyGeminiError(status, body);
  }

  buildChatRequest(channel: Channel, credential: string, request: ChatRequest, upstreamModel: string): UpstreamRequest {
    const account = serviceAccountOf(credential);
    const anthropic = publisherOf(upstreamModel) === 'anthropic';
    let body: Record<string, unknown>;
    let url: string;
    if (anthropic) {
      const { model: _model, ...messages } = buildAnthropicBody(request, anthropicBodyOptions(channel, upstreamModel, request.model));
      body = { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...messages };
      url = vertexUrl(channel, account, upstreamModel, request.stream ? 'streamRawPredict' : 'rawPredict');
    } else {
      body = buildGenerateContentBody(request, upstreamModel, readGeminiSettings(channel.settings, upstreamModel), request.warnings);
      url = vertexUrl(channel, account, upstreamModel, request.stream ? 'streamGenerateContent' : 'generateContent');
    }
    return this.authorized(channel, credential, url, JSON.stringify(body));
  }

  /** A POST of `body` to `url` with the channel's headers, carrying the key's access token (renewed once if refused). */
  private authorized(channel: Channel, credential: string, url: string, body: string): UpstreamRequest {
    const account = serviceAccountOf(credential);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(channel.headers)) headers[name.toLowerCase()] = value;
    headers['content-type'] = 'application/json';
    let sent: string | null = null;
    return {
      url,
      method: 'POST',
      headers,
      body,
      authorize: async (unsigned, { refresh }) => {
        sent = await this.#tokens.token(credential, account, refresh ? sent : null);
        return { ...unsigned, headers: { ...unsigned.headers, authorization: `Bearer ${sent}` } };
      },
    };
  }

  parseChatResponse(body: Buffer, request: ChatRequest): ChatResponse {
    return isAnthropicAnswer(body) ? parseAnthropicResponse(body) : parseGenerateContentResponse(body, request);
  }

  parseChatStream(body: AsyncIterable<Buffer>, request: ChatRequest): AsyncIterable<StreamPart> {
    return parseVertexStream(body, request);
  }
}
