import type { Channel } from '../domain/records.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ChatResponse } from '../ir/chat-response.js';
import type { StreamPart } from '../ir/stream-part.js';
import type { UpstreamAdapter, UpstreamRequest, UpstreamRerank, UpstreamTransport } from './upstream-adapter.js';
import type { Wire } from '../wire/wire.js';

/** The answer to a chat request routed to a channel whose upstream only reranks: the model is set up wrong. */
function servesNoChat(wire: Wire): GatewayError {
  return new GatewayError('bad_request', `This model is served by a ${wire.name} channel, which answers rerank requests only (POST /v1/rerank).`, { param: 'model' });
}

/**
 * An upstream the gateway uses for reranking only (Cohere, Jina, Voyage): a Bearer key, the channel's base URL or
 * the vendor's, and one JSON endpoint. Chat requests routed to it are refused as a model set up wrong.
 */
export abstract class RerankOnlyAdapter implements UpstreamAdapter {
  abstract readonly wire: Wire;
  readonly servesChat = false;
  abstract readonly rerank: UpstreamRerank;
  protected abstract readonly defaultBaseUrl: string;

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
