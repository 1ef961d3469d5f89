import type { ClientCodec } from '../codecs/client-codec.js';
import type { ClientFamily } from '../codecs/client-family.js';
import type { ChatRequest } from '../ir/chat-request.js';
import type { UpstreamFailureClass } from '../routing/failure-class.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { RequestGuard } from '../guardrail-policies/request-guard.js';
import type { AnswerPrice, AnswerReport } from '../billing/answer-report.js';
import type { CheckpointStream } from '../billing/settle.js';
import type { UpstreamResponse } from '../upstreams/upstream-adapter.js';
import type { AnswerCapture, AnswerRecorder } from './response-cache/response-cache.js';
import type { ResponseSink } from './response-sink.js';
import type { AttemptLog } from './attempt-log.js';
import type { CallerSignal } from './caller-signal.js';
import type { StreamStop } from './live-streams.js';

/** What a chat relay is given: the caller's request in both its forms, where its answer goes and what it is billed at. */
export interface ChatRelayRequest {
  /** Where the answer goes. */
  sink: ResponseSink;
  /** The caller's family (the time-to-first-byte histogram's protocol label). */
  family: ClientFamily;
  /** Where the relay records its attempts (and reads the request's facts); it reports its answer and never settles. */
  attempts: AttemptLog;
  /** The model the answer is billed at: the cost the answer carries and the report's price. */
  price: AnswerPrice;
  /** Starts a stream's checkpoints. */
  checkpoint: CheckpointStream;
  codec: ClientCodec;
  /** The caller's body, for the pass-through path. */
  body: Record<string, unknown>;
  /**
   * The bytes `body` was parsed from while it still says exactly what they say, else null (a field was taken out or
   * added): a pass-through channel that needs no rewrite of them gets them as they came (`passThroughBody`).
   */
  callerBytes: Buffer | null;
  /** The canonical request, decoded on first use (only the translated path needs it). */
  chat: () => ChatRequest;
  stream: boolean;
  /** Extra response headers (rate-limit headers); the relay completes this set (answering model, cost) and sends it. */
  responseHeaders: Record<string, string>;
  /** Caller headers a same-protocol upstream should see (the headers of the codec's pass-through part). */
  clientHeaders: Record<string, string>;
  /** Tokens the request may take (prompt estimate plus the output cap), for per-channel-model TPM; default the prompt estimate. */
  estimatedTokens?: number;
  /** The response cache's recorder of the answer, when this request's answer is to be cached. */
  capture?: AnswerCapture | null;
  /**
   * The public id the answer names as its model when it is not the one the caller asked for (a fallback model
   * answered): translated answers and complete same-protocol answers carry it in their model field.
   */
  answeringModel?: string;
  /**
   * The request's guardrails, when policies apply: its input was checked already; every channel then gets the
   * translated request (so the masked text is what goes upstream) and the answer is checked on its way back.
   */
  guard?: RequestGuard | null;
}

/**
 * One answer being relayed, on either path (pass-through, translated) and of either kind (whole, streamed): the
 * request, the upstream's response to this attempt and what reading it takes. Made once per answered attempt.
 */
export interface AnswerContext {
  readonly request: ChatRelayRequest;
  readonly response: UpstreamResponse;
  /** The caller's signal for this attempt: aborted when the caller left (or the stream was stopped). */
  readonly signal: CallerSignal;
  /** Observes the answer's first byte (the time-to-first-byte histogram). */
  readonly onFirstByte: () => void;
  /** The response cache's recorder of this attempt's answer; null: not cached. */
  readonly recorder: AnswerRecorder | null;
  /** Ends a stream early when its key or account changes; null: not a stream, or nothing tells of such changes. */
  readonly stop: StreamStop | null;
}

/**
 * How one attempt ended once the upstream had answered 2xx: fully relayed, the caller left, broken off after
 * bytes reached the caller (the stream ended with an error event), or failed before the first byte (retry).
 */
export type RelayResult =
  | { kind: 'success'; report: AnswerReport }
  | { kind: 'aborted'; report: AnswerReport }
  | { kind: 'stopped'; report: AnswerReport }
  | { kind: 'broken'; failureClass: UpstreamFailureClass; report: AnswerReport }
  /** A guardrail refused the whole answer: the caller gets the refusal, billed for what the upstream produced. */
  | { kind: 'refused'; error: GatewayError; report: AnswerReport }
  | { kind: 'retry'; failureClass: UpstreamFailureClass };

