import type { ChatRequest } from '../../ir/chat-request.js';
import type { ChatResponse } from '../../ir/chat-response.js';
import type { StreamPart } from '../../ir/stream-part.js';
import type { Channel } from '../../domain/records.js';
import { ANTHROPIC_DEFAULT_MAX_TOKENS } from '../anthropic/anthropic-adapter.js';
import { AuthorizingTransport } from '../authorizing-transport.js';
import type { UpstreamAdapter, UpstreamErrorClass, UpstreamRequest, UpstreamRerank, UpstreamTransport } from '../upstream-adapter.js';
import { bedrockCredentials } from './bedrock-credentials.js';
import { bedrockRegion, bedrockUrl } from './bedrock-endpoint.js';
import { bedrockRerankBody, bedrockRerankUrl, parseBedrockRerank } from './bedrock-rerank.js';
import { buildConverseBody } from './build-converse-body.js';
import { classifyBedrockError } from './classify-error.js';
import type { ConverseRequestBody } from '../../wire/bedrock/converse-wire.js';
import { parseConverseResponse } from './parse-converse-response.js';
import { parseConverseStream } from './parse-converse-stream.js';
import { signRequest } from './sign-request.js';
import { bedrockConverseWire } from '../../wire/bedrock/wire.js';

/** A Bedrock guardrail applied to every request of the channel (`settings.guardrail_identifier`, `guardrail_version`). */
function guardrailOf(channel: Channel): ConverseRequestBody['guardrailConfig'] {
  const identifier = channel.settings.guardrail_identifier;
  if (typeof identifier !== 'string' || identifier === '') return undefined;
  const version = channel.settings.guardrail_version;
  return { guardrailIdentifier: identifier, guardrailVersion: typeof version === 'string' && version !== '' ? version : 'DRAFT' };
}

/**
 * The channel's headers and the credential: a Bedrock API key as a Bearer token, or IAM credentials as a SigV4
 * signature applied by the transport over the final request.
 */
function authenticated(channel: Channel, credential: string, request: Omit<UpstreamRequest, 'headers'>, accept: string): UpstreamRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(channel.headers)) headers[name.toLowerCase()] = value;
  headers['content-type'] = 'application/json';
  headers.accept = accept;
  const credentials = bedrockCredentials(credential);
  if (credentials.kind === 'api-key') {
    headers.authorization = `Bearer ${credentials.apiKey}`;
    return { ...request, headers };
  }
  const region = bedrockRegion(channel);
  return { ...request, headers, authorize: (unsigned) => signRequest(unsigned, credentials, { region, service: 'bedrock' }) };
}

/**
 * Amazon Bedrock (channel type `bedrock`) through the Converse and ConverseStream APIs, which serve every chat model
 * family on Bedrock (Anthropic, Llama, Mistral, Nova, Cohere, …) in one wire, and its Rerank API for reranking models
 * (Amazon Rerank, Cohere Rerank). Requests are always translated. No embeddings, and tokens are counted locally
 * (Bedrock's CountTokens API is not offered in every region).
 */
export class BedrockAdapter implements UpstreamAdapter {
  readonly wire = bedrockConverseWire;
  readonly #transport: UpstreamTransport;

  /** `POST /rerank` on the Agents runtime, signed (or keyed) like every Bedrock call. */
  readonly rerank: UpstreamRerank = {
    build: (channel, credential, request, upstreamModel) =>
      authenticated(channel, credential, { url: bedrockRerankUrl(channel), method: 'POST', body: bedrockRerankBody(channel, request, upstreamModel) }, 'application/json'),
    parse: parseBedrockRerank,
  };

  constructor(http: UpstreamTransport) {
    this.#transport = new AuthorizingTransport(http);
  }

  transport(): UpstreamTransport {
    return this.#transport;
  }

  classifyError(status: number): UpstreamErrorClass {
    return classifyBedrockError(status);
  }

  buildChatRequest(channel: Channel, credential: string, request: ChatRequest, upstreamModel: string): UpstreamRequest {
    const configured = channel.settings.default_max_tokens;
    const body = buildConverseBody(request, {
      upstreamModel,
      defaultMaxTokens: typeof configured === 'number' && Number.isInteger(configured) && configured > 0 ? configured : ANTHROPIC_DEFAULT_MAX_TOKENS,
    });
    const guardrail = guardrailOf(channel);
    if (guardrail !== undefined) body.guardrailConfig = guardrail;
    const url = bedrockUrl(channel, upstreamModel, request.stream ? 'converse-stream' : 'converse');
    return authenticated(channel, credential, { url, method: 'POST', body: JSON.stringify(body) }, request.stream ? 'application/vnd.amazon.eventstream' : 'application/json');
  }

  parseChatResponse(body: Buffer, request: ChatRequest): ChatResponse {
    return parseConverseResponse(body, request.model);
  }

  parseChatStream(body: AsyncIterable<Buffer>, request: ChatRequest): AsyncIterable<StreamPart> {
    return parseConverseStream(body, request.model);
  }
}
