import type { GatewayError } from '../errors/gateway-error.js';
import type { ChatRequest } from '../ir/chat-request.js';
import type { AnswerFacts } from '../ir/answer-facts.js';
import type { ChatResponse } from '../ir/chat-response.js';
import type { StreamPart } from '../ir/stream-part.js';
import type { Usage } from '../ir/usage.js';
import type { ClientWire } from '../wire/wire.js';
import type { AnswerCost } from '../wire/usage-cost.js';

/** Turns canonical stream parts into the client protocol's stream bytes. */
export interface StreamEncoder {
  /** Text to write for this part ('' when the part produces nothing on this protocol). */
  encode(part: StreamPart): string;
  /** Text to write after the last part (e.g. OpenAI's `data: [DONE]`, the closing `]` of a Gemini JSON array). */
  end(): string;
}

/**
 * How the caller asked for its stream to be framed, as its wire marks it. Read by the codec from the request, and
 * bound into the codec of that request: nothing outside the codec reads it.
 */
export interface StreamFraming {
  /** OpenAI: the caller asked for the usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Gemini: `alt=sse` framing (true) or the streamed JSON array (false). */
  sse: boolean;
}

/** What a codec's stream encoder is built with: the request's framing and the model it names. */
export interface StreamEncoderOptions extends StreamFraming {
  /** The public model id the caller asked for, echoed in the stream. */
  model: string;
}

/**
 * How an event at the start of a pass-through stream reads, asked only until the first byte reached the caller:
 * `preamble` carries no answer yet (Anthropic's message_start or ping, OpenAI's role chunk) and is held back, so an
 * in-band `error` right after it can still be retried on another channel; `content` releases what was held.
 */
export type OpeningEvent = { kind: 'content' } | { kind: 'preamble' } | { kind: 'error'; status: number };

/**
 * Watches a same-protocol (pass-through) stream on the side: reads usage, decides which raw events reach the
 * client (only OpenAI drops the usage chunk it asked for), and never parses more than it must. Answer events are
 * kept by reference, and their text extracted only when the stream ends without the upstream's final usage.
 */
export interface PassThroughStreamObserver {
  /** Returns true when the event must be forwarded. */
  observe(event: Buffer): boolean;
  /** Classifies an event at the start of the stream (see OpeningEvent); not called once bytes reached the caller. */
  opening(event: Buffer): OpeningEvent;
  /** The latest usage the upstream reported (running totals), or null. */
  reportedUsage(): Usage | null;
  /** The reported usage covers the whole answer (the upstream's closing usage was seen). */
  usageIsFinal(): boolean;
  /**
   * The answer text observed since the last call (text, reasoning, tool names and arguments), for counting a cut
   * stream as it goes: the events are handed over at once and each is read as the sequence reaches it (a piece per
   * event), so a long backlog can be read in turns; the events read are let go, so a long stream is never read twice
   * nor held whole.
   */
  takeDeliveredText(): Iterable<string>;
  /** The answer's end was forwarded (finish reason, message_stop, …): a fault after it does not spoil the answer. */
  completed(): boolean;
  /** The upstream ended the stream with its own failure event (e.g. Responses `response.failed`), or null. */
  failure?(): { code: string; message: string } | null;
  /** The answering model and finish reasons the stream reported so far; read once, after it ended, for traces. */
  answerFacts(): AnswerFacts;
  /**
   * A forwarded event as the caller gets it: the first one after which the usage is final carries the cost of that
   * usage in its usage object (when the observer was made with a cost); every other event as it came.
   */
  priced(event: Buffer): Buffer;
}

/**
 * What a codec whose wire can be forwarded as it came adds for the pass-through path: the caller headers the upstream
 * needs, whether a stream goes back as it came, and readers of the upstream's own answer (usage, answer facts) on the
 * side. A codec without one is always translated: `chooseWire` never picks pass-through for it, and the relay's
 * pass-through path takes this part (not the codec), so it cannot be reached without one.
 */
export interface PassThroughCodec {
  /** Client request headers forwarded to a same-protocol upstream (e.g. `anthropic-version`, `anthropic-beta`). */
  readonly headers: readonly string[];
  /**
   * Whether a same-protocol upstream's stream can go back as it came in this framing; false when the caller's
   * framing is rebuilt from canonical parts (Gemini's JSON array: the upstream is always asked for SSE).
   */
  streamPassesThrough(): boolean;
  /** Usage reader for a same-protocol upstream's whole answer. */
  usageFromResponseBody(body: Buffer): Usage | null;
  /** The answering model and finish reasons of a same-protocol upstream's answer body, for traces. */
  answerFactsOfBody(body: Buffer): AnswerFacts;
  /** An observer of one stream; with a cost, it prices the event that completes the stream's usage (`priced`). */
  createObserver(cost?: AnswerCost): PassThroughStreamObserver;
  /**
   * A same-protocol upstream's whole answer as the caller's request would have had it: request fields the upstream
   * echoes that the gateway added to the body (the header-named end customer) shown as for a body without them.
   * Absent: the answer goes back as it came.
   */
  callerAnswer?(body: Buffer): Buffer;
  /** The same for one event of a same-protocol stream (its SSE framing kept). */
  callerStreamEvent?(event: Buffer): Buffer;
}

/**
 * One client protocol: its wire ⇄ the canonical representation, bound to the stream framing of a request (a codec
 * whose wire has framing options exports one object per framing and picks it when it reads the request; the
 * Responses codec is built per request). Every codec folder exports it from `codecs/<protocol>/index.ts`.
 */
export interface ClientCodec {
  /** The wire its clients speak: what reaches a same-wire upstream as it came, and how. */
  readonly wire: ClientWire;
  /**
   * The field of a non-streamed answer that holds its usage object (`usage`, Gemini's `usageMetadata`), for the
   * request's cost spliced in (null: the header only).
   */
  readonly usageKey: string | null;
  /**
   * Where a streamed answer keeps its final usage (OpenAI's usage chunk, Anthropic's message_delta, Gemini's last
   * chunk), for the request's cost spliced into the event that completes it; null when the stream carries none.
   */
  streamUsageKey(): string | null;
  /** The Content-Type of a streamed answer in the framing the caller asked for. */
  streamContentType(): string;
  /** Validates and decodes a request body (400 GatewayError naming the field on bad input). */
  decodeRequest(body: Record<string, unknown>, hints: { pathModel?: string; stream?: boolean }): ChatRequest;
  /** A non-streaming response body as JSON text. */
  encodeResponse(response: ChatResponse, model: string): string;
  /** A stream's encoder; with a cost, the encoding of the finish part carries the cost of the final usage. */
  createStreamEncoder(options: { model: string; cost?: AnswerCost }): StreamEncoder;
  /** An error as an in-stream event, for failures after the first byte. */
  encodeStreamError(error: GatewayError): string;
  /** The pass-through part, only where the wire's answers can go back as a same-wire upstream wrote them. */
  readonly passThrough?: PassThroughCodec;
}

/** A codec whose wire can be forwarded as it came (every codec a same-wire upstream serves). */
export type ForwardingCodec = ClientCodec & { readonly passThrough: PassThroughCodec };
