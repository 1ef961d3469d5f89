import { mapsHostedTools } from '../hosted-tools.js';
import type { ChatRequest } from '../../ir/chat-request.js';
import type { ChatResponse } from '../../ir/chat-response.js';
import type { EmbeddingRequest } from '../../ir/embedding.js';
import type { StreamPart } from '../../ir/stream-part.js';
import type { Channel } from '../../domain/records.js';
import type { UpstreamAdapter, UpstreamErrorClass, UpstreamPassThrough, UpstreamRequest, UpstreamTransport } from '../upstream-adapter.js';
import { geminiWire } from '../../wire/gemini/wire.js';
import { passThroughEndpoint } from '../../wire/wire.js';
import { generateContentBodyBytes, readGeminiSettings } from './build-generate-content-body.js';
import { classifyGeminiError } from './classify-error.js';
import { buildCountTokensBody, parseCountTokensBody } from './count-tokens.js';
import { buildEmbeddingBody, parseEmbeddingBody } from './embeddings.js';
import { geminiHeaders, geminiModelResource, geminiUrl } from './gemini-endpoint.js';
import { geminiMediaCapabilities } from './image-generation.js';
import { retargetPassThroughBody } from './retarget-pass-through-body.js';
import { parseGenerateContentResponse } from './parse-response.js';
import { parseGeminiStream } from './parse-stream.js';

/**
 * Google's Gemini API (channel type `gemini`): `{base}/v1beta/models/{model}:{method}` with the key in
 * `x-goog-api-key`. Streams are always requested with `alt=sse`; the model travels in the URL.
 */
export class GeminiAdapter implements UpstreamAdapter {
  readonly wire = geminiWire;
  readonly media = geminiMediaCapabilities;

  constructor(private readonly http: UpstreamTransport) {}

  readonly passThrough: UpstreamPassThrough = {
    build: (channel, credential, operation, upstreamModel, body) => ({
      url: geminiUrl(channel, upstreamModel, passThroughEndpoint(geminiWire, operation)),
      method: 'POST',
      headers: geminiHeaders(channel, credential),
      body: retargetPassThroughBody(operation, body, geminiModelResource(upstreamModel)),
    }),
  };

  transport(): UpstreamTransport {
    return this.http;
  }

  classifyError(status: number, body: Buffer): UpstreamErrorClass {
    return classifyGeminiError(status, body);
  }

  buildChatRequest(channel: Channel, credential: string, request: ChatRequest, upstreamModel: string): UpstreamRequest {
    const settings = readGeminiSettings(channel.settings, upstreamModel, mapsHostedTools(channel, request.model));
    return {
      url: geminiUrl(channel, upstreamModel, request.stream ? 'streamGenerateContent' : 'generateContent'),
      method: 'POST',
      headers: geminiHeaders(channel, credential),
      body: generateContentBodyBytes(request, upstreamModel, settings, request.warnings),
    };
  }

  parseChatResponse(body: Buffer, request: ChatRequest): ChatResponse {
    return parseGenerateContentResponse(body, request);
  }

  parseChatStream(body: AsyncIterable<Buffer>, request: ChatRequest): AsyncIterable<StreamPart> {
    return parseGeminiStream(body, request);
  }

  readonly countTokens = {
    build: (channel: Channel, credential: string, request: ChatRequest, upstreamModel: string): UpstreamRequest => {
      const settings = readGeminiSettings(channel.settings, upstreamModel);
      return {
        url: geminiUrl(channel, upstreamModel, 'countTokens'),
        method: 'POST',
        headers: geminiHeaders(channel, credential),
        body: JSON.stringify(buildCountTokensBody(request, upstreamModel, geminiModelResource(upstreamModel), settings)),
      };
    },
    parse: parseCountTokensBody,
  };

  readonly embeddings = {
    build: (channel: Channel, credential: string, request: EmbeddingRequest, upstreamModel: string): UpstreamRequest => {
      const { batch, body } = buildEmbeddingBody(request, geminiModelResource(upstreamModel));
      return {
        url: geminiUrl(channel, upstreamModel, batch ? 'batchEmbedContents' : 'embedContent'),
        method: 'POST',
        headers: geminiHeaders(channel, credential),
        body: JSON.stringify(body),
      };
    },
    parse: parseEmbeddingBody,
  };
}
