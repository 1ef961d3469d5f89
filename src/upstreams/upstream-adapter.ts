import type { ChatRequest } from '../ir/chat-request.js';
import type { ChatResponse } from '../ir/chat-response.js';
import type { EmbeddingRequest, EmbeddingResponse } from '../ir/embedding.js';
import type { RerankRequest, RerankResponse } from '../ir/rerank.js';
import type { StreamPart } from '../ir/stream-part.js';
import type { Channel } from '../domain/records.js';
import type { MediaCapabilities } from './media-capabilities.js';

import type { UpstreamOperation, Wire } from '../wire/wire.js';
import type { CallerSignal } from '../relay/caller-signal.js';

export type { UpstreamOperation } from '../wire/wire.js';

/**
 * A body too large to hold in memory (an uploaded file rebuilt as multipart): its exact length (sent as
 * Content-Length), and a fresh stream of it for every attempt, so a retry can send it again.
 */
export interface StreamedBody {
  readonly length: number;
  open(): AsyncIterable<Buffer>;
}

export interface UpstreamRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string | Buffer | null;
  /** Sent instead of `body` when present: a large upload, streamed from disk. */
  streamedBody?: StreamedBody;
  /**
   * Credentials computed per request, applied by the transport right before sending: a signature over the final
   * request (AWS SigV4) or a fetched access token (Google OAuth). `refresh`: the last credential was refused (401),
   * so a cached one must not be reused.
   */
  authorize?: (request: UpstreamRequest, options: { refresh: boolean }) => Promise<UpstreamRequest>;
}

/**
 * An upstream answer's body: its chunks as they come, and, where the transport can give it so, the whole body as
 * one promise (read one way or the other, not both).
 */
export type UpstreamBody = AsyncIterable<Buffer> & { whole?(): Promise<Buffer> };

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: UpstreamBody;
  /** Stops reading and frees the connection. */
  discard(): void;
}

export interface UpstreamTimeouts {
  /** Until the response headers arrive. */
  firstByteMs: number;
  /** Longest silence between two body chunks. */
  idleMs: number;
}

/**
 * What an upstream error answer means for routing: the channel's key is bad (`credential`), the channel cannot
 * serve now (`channel`), a transient fault (`retryable`), or the caller's request is wrong (`caller`).
 */
export type UpstreamErrorClass = 'credential' | 'channel' | 'retryable' | 'caller';

export interface UpstreamTransport {
  send(request: UpstreamRequest, options: { signal: CallerSignal; timeouts: UpstreamTimeouts }): Promise<UpstreamResponse>;
}

export interface UpstreamCountTokens {
  /** The counter's request for a canonical request; absent: only a pass-through count reaches the counter. */
  build?(channel: Channel, credential: string, request: ChatRequest, upstreamModel: string): UpstreamRequest;
  /** A successful (2xx) counter answer, translated or pass-through → input tokens. */
  parse(body: Buffer): number;
}

export interface UpstreamEmbeddings {
  build(channel: Channel, credential: string, request: EmbeddingRequest, upstreamModel: string): UpstreamRequest;
  /** A successful (2xx) body → canonical response. */
  parse(body: Buffer, request: EmbeddingRequest): EmbeddingResponse;
}

export interface UpstreamRerank {
  /** The request for the channel, or null where this channel serves no rerank (it is skipped). */
  build(channel: Channel, credential: string, request: RerankRequest, upstreamModel: string): UpstreamRequest | null;
  /** A successful (2xx) body → canonical response (results checked against the request's documents). */
  parse(body: Buffer, request: RerankRequest): RerankResponse;
}

/** Sending a caller's body as it came, on the adapter's wire (the relay asks `chooseWire` first). */
export interface UpstreamPassThrough {
  /** An HTTP request carrying `body` (already in the adapter's wire) to the channel, for an operation the wire has. */
  build(channel: Channel, credential: string, operation: UpstreamOperation, upstreamModel: string, body: string | Buffer): UpstreamRequest;
  /**
   * Whether this channel takes `operation` (one the wire has) as it came (OpenAI's Responses API only on the channels
   * that serve it). Absent: every operation the wire has.
   */
  serves?(channel: Channel, operation: UpstreamOperation): boolean;
}

/**
 * One upstream provider type. It knows its URLs, authentication and wire format; the relay knows none of that.
 * Translation between protocols (IR in, IR out) joins this interface with the other families.
 */
export interface UpstreamAdapter {
  /** The wire the upstream speaks: its name and the operations it takes as the caller sent them. */
  readonly wire: Wire;
  /** Sending a caller's body as it came; absent: every request is translated (Bedrock, Vertex AI). */
  readonly passThrough?: UpstreamPassThrough;
  /** How the request reaches the upstream: HTTP for real providers, in-process for the simulator. */
  transport(channel: Channel): UpstreamTransport;
  /** Classifies an error answer when the status alone misleads (Gemini answers a bad key with 400); else by status. */
  classifyError?(status: number, body: Buffer): UpstreamErrorClass;

  // The translated path: canonical request in, canonical response or stream parts out.
  /** Maps the canonical request to this upstream's wire (streaming when `request.stream`), clamping what it must. */
  buildChatRequest(channel: Channel, credential: string, request: ChatRequest, upstreamModel: string): UpstreamRequest;
  /** A successful (2xx) non-streaming body → canonical response. */
  parseChatResponse(body: Buffer, request: ChatRequest): ChatResponse;
  /** A successful streaming body → canonical parts (see StreamPart for the order). */
  parseChatStream(body: AsyncIterable<Buffer>, request: ChatRequest): AsyncIterable<StreamPart>;
  /** The upstream's own token counter, where it has one; absent: requests are counted locally. */
  readonly countTokens?: UpstreamCountTokens;
  /** Embeddings of a canonical request, where the upstream serves them; absent: its channels are skipped. */
  readonly embeddings?: UpstreamEmbeddings;
  /** False for an upstream that serves no chat (a rerank-only vendor): channel tests and probes rerank instead. */
  readonly servesChat?: boolean;
  /** Reranking documents against a query, where the upstream serves it; absent: its channels are skipped. */
  readonly rerank?: UpstreamRerank;
  /** Images, audio and moderations, where the upstream has them (see media-capabilities.ts); absent: none. */
  readonly media?: MediaCapabilities;
}
