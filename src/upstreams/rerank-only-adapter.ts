import type { Channel } from '../domain/records.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ChatResponse } from '../ir/chat-response.js';
import type { RerankRequest, RerankResponse } from '../ir/rerank.js';
import type { StreamPart } from '../ir/stream-part.js';
import type { UpstreamAdapter, UpstreamRequest, UpstreamRerank, UpstreamTransport } from './upstream-adapter.js';
import type { Wire } from '../wire/wire.js';

/** The answer to a chat request routed to a channel whose upstream only reranks: the model is set up wrong. */
function servesNoChat(wire: Wire): GatewayError {
  return new GatewayError('bad_request', `This model is served by a ${wire.name} channel, which answers rerank requests only (POST /v1/rerank).`, { param: 'model' });
}

export interface RerankEndpoint {
  path: string;
  body(request: RerankRequest, upstreamModel: string): string;
  parse(body: Buffer, request: RerankRequest): RerankResponse;
}

/**
 * An upstream the gateway uses for reranking only (Cohere, Jina, Voyage): a Bearer key, the channel's base URL or
 * the vendor's, and one JSON endpoint. Chat requests routed to it are refused as a model set up wrong.
 */
export abstract class RerankOnlyAdapter implements UpstreamAdapter {
  abstract readonly wire: Wire;
  readonly servesChat = false;
  protected abstract readonly defaultBaseUrl: string;
  /** The vendor's rerank endpoint: its path under the base URL, its request body and its answer. */
  protected abstract readonly endpoint: RerankEndpoint;

  readonly rerank: UpstreamRerank = {
    build: (channel, credential, request, upstreamModel) =>
      this.post(channel, credential, this.endpoint.path, this.endpoint.body(request, upstreamModel)),
    parse: (body, request) => this.endpoint.parse(body, request),
  };

  constructor(private readonly http: UpstreamTransport) {}

  transport(): UpstreamTransport {
    return this.http;
  }

  /** A POST of `body` to `path` under the channel's base URL, with its key as a Bearer token and its own headers. */
  protected post(channel: Channel, credential: string, path: string, body: string): UpstreamRequest {
    const base = (channel.baseUrl ?? this.defaultBaseUrl).replace(/\/+$/, '');
    return { url: base + path, method: 'POST', headers: { ...channel.headers, authorization: `Bearer ${credential}`, 'content-type': 'application/json' }, body };
  }

  buildChatRequest(): UpstreamRequest {
    throw servesNoChat(this.wire);
  }

  parseChatResponse(): ChatResponse {
    throw servesNoChat(this.wire);
  }

  parseChatStream(): AsyncIterable<StreamPart> {
    throw servesNoChat(this.wire);
  }
}
