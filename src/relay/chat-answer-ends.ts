import type { AnswerFacts } from '../ir/answer-facts.js';
import type { Usage } from '../ir/usage.js';
import type { UpstreamResponse } from '../upstreams/upstream-adapter.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { AnswerReport } from '../billing/answer-report.js';
import { countTokensLocally } from '../tokenize/count-tokens-locally.js';
import type { CallerSignal } from './caller-signal.js';
import type { ChatRelayRequest, RelayResult } from './chat-relay-request.js';
import type { AnswerRecorder } from './response-cache/response-cache.js';
import type { AnswerStream } from './response-sink.js';
import { failureClassOf, upstreamFailureError } from './upstream-call.js';

/*
 * How a relayed chat answer ends, on the pass-through and the translated path alike: the caller's stream ended
 * normally, broken off, stopped, or the caller gone; each with the report of what it is billed.
 */

/** A chat stream opened to the caller, on either path: what its end needs. */
export interface OpenStream {
  request: ChatRelayRequest;
  response: UpstreamResponse;
  client: AnswerStream;
  signal: CallerSignal;
  /** What the stream is billed if it ends now (see delivered-usage.ts). */
  billedUsage: () => Promise<Usage | null>;
  recorder: AnswerRecorder | null;
  /** The usage row's code for an answer that succeeded (e.g. a hosted tool dropped), or null. */
  successCode: string | null;
  /** The answering model and finish reasons seen so far, for traces. */
  answer: () => AnswerFacts;
}

/**
 * The upstream's stream ended: the caller's stream ends with `tail`, reported with what it is billed (the metered
 * frame settles the request before the caller's stream ends, so its usage row exists once the caller has the whole
 * answer). `failed` is an upstream failure that already reached the caller in-band.
 */
export async function endStream(stream: OpenStream, tail: string | Buffer | undefined, failed: { status: number; code: string } | null): Promise<Extract<RelayResult, { kind: 'success' }>> {
  const usage = await stream.billedUsage();
  stream.client.end(tail);
  const report: AnswerReport = { status: failed?.status ?? 200, errorCode: failed?.code ?? stream.successCode, usage, price: stream.request.price, answer: stream.answer };
  if (failed === null) stream.recorder?.complete();
  return { kind: 'success', report };
}

/**
 * The upstream's stream failed (or the caller left) part-way: the caller leaving settles what was delivered; before
 * the first byte the next channel may try; after the answer's end reached the caller (`closing` is then what closes
 * its stream) it ends normally; otherwise the caller's stream ends with an error event in its family's format.
 */
export async function breakOffStream(stream: OpenStream, error: unknown, closing: string | Buffer | undefined | null): Promise<RelayResult> {
  const { request, client } = stream;
  stream.response.discard();
  if (stream.signal.aborted) return aborted(request, await stream.billedUsage());
  const failureClass = failureClassOf(error, true);
  if (!client.started) return { kind: 'retry', failureClass };
  const usage = await stream.billedUsage();
  if (closing !== null) {
    client.end(closing);
    return { kind: 'success', report: { status: 200, errorCode: stream.successCode, usage, price: request.price, answer: stream.answer } };
  }
  const failure = upstreamFailureError(failureClass);
  client.end(request.codec.encodeStreamError(failure));
  return { kind: 'broken', failureClass, report: { status: failure.status, errorCode: failure.code, usage, price: request.price, answer: stream.answer } };
}

/**
 * The stream was stopped by a change of its key or account: the caller's stream ends with that refusal as its
 * family's error event, and the request is billed for what was delivered.
 */
export async function stopStream(stream: OpenStream, reason: GatewayError): Promise<RelayResult> {
  const { request, client } = stream;
  stream.response.discard();
  // Settled before the caller's stream ends, like every other end: its usage row exists once the caller has the
  // error event.
  const usage = await stream.billedUsage();
  client.end(request.codec.encodeStreamError(reason));
  return { kind: 'stopped', report: { status: reason.status, errorCode: reason.code, usage, price: request.price, answer: stream.answer } };
}

/** The caller left: billed for what was delivered. */
export function callerLeft(request: ChatRelayRequest, usage: Usage | null = null): AnswerReport {
  return { status: 499, errorCode: 'client_closed_request', usage, price: request.price };
}

export function aborted(request: ChatRelayRequest, usage: Usage | null = null): RelayResult {
  return { kind: 'aborted', report: callerLeft(request, usage) };
}

/** The request's input counted locally (for a cut stream whose upstream reported none), else the route's estimate. */
export async function localPromptTokens(request: ChatRelayRequest): Promise<number> {
  try {
    return (await countTokensLocally(request.chat())).inputTokens;
  } catch {
    return request.attempts.request.promptTokensEstimate;
  }
}

/** The first call's promise, for every call (the local prompt count is asked at each checkpoint and at the end). */
export function memoized<T>(compute: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | null = null;
  return () => (result ??= compute());
}
