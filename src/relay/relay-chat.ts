import type { ClientCodec } from '../codecs/client-codec.js';
import type { ClientFamily } from '../codecs/client-family.js';
import { SseEventSplitter } from '../wire/sse-event-splitter.js';
import type { ChatRequest } from '../ir/chat-request.js';
import type { ChatResponse } from '../ir/chat-response.js';
import type { AnswerFacts } from '../ir/answer-facts.js';
import type { Usage } from '../ir/usage.js';
import type { ChannelRoute } from '../routing/catalog.js';
import type { UpstreamFailureClass } from '../routing/failure-class.js';
import { RoutePlan, type Candidate } from '../routing/route-plan.js';
import type { UpstreamAdapter, UpstreamRequest, UpstreamResponse } from '../upstreams/upstream-adapter.js';
import { answerNamingModel } from '../wire/pass-through-body.js';
import { chooseWire, type RequestedOperation, type WireChoice } from './choose-wire.js';
import type { RelayDependencies } from './relay-dependencies.js';
import type { AnswerStream, ResponseSink } from './response-sink.js';
import type { RequestMeter } from './request-meter.js';
import { exhaustedError, failureClassOf, upstreamFailureError } from './upstream-call.js';
import { openAttempt, tryPool, type PoolOutcome } from './pool-attempts.js';
import { readingAnswer } from './upstream-attempt.js';
import { usageAtFirstByte, usageOfDelivered, type DeliveredAnswer } from './delivered-usage.js';
import { countTokensLocally } from '../tokenize/count-tokens-locally.js';
import type { PassThroughStreamObserver } from '../codecs/client-codec.js';
import type { AnswerCapture, AnswerRecorder } from './response-cache/response-cache.js';
import type { CallerSignal } from './caller-signal.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RequestGuard } from '../guardrail-policies/request-guard.js';
import type { StreamPart } from '../ir/stream-part.js';
import { StreamStop } from './live-streams.js';
import { withReport, type AnswerPrice, type AnswerReport } from '../billing/answer-report.js';
import type { CheckpointStream } from '../billing/settle.js';

export interface ChatRelayRequest {
  /** Where the answer goes. */
  sink: ResponseSink;
  /** The caller's family (the time-to-first-byte histogram's protocol label). */
  family: ClientFamily;
  /** What is observed of the request (attempts, first byte); the relay reports its answer and never settles. */
  meter: RequestMeter;
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
  /** Caller headers a same-protocol upstream should see (the codec's passThroughHeaders). */
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
 * How one attempt ended once the upstream had answered 2xx: fully relayed, the caller left, broken off after
 * bytes reached the caller (the stream ended with an error event), or failed before the first byte (retry).
 */
type RelayResult =
  | { kind: 'success'; report: AnswerReport }
  | { kind: 'aborted'; report: AnswerReport }
  | { kind: 'stopped'; report: AnswerReport }
  | { kind: 'broken'; failureClass: UpstreamFailureClass; report: AnswerReport }
  /** A guardrail refused the whole answer: the caller gets the refusal, billed for what the upstream produced. */
  | { kind: 'refused'; error: GatewayError; report: AnswerReport }
  | { kind: 'retry'; failureClass: UpstreamFailureClass };

/**
 * Sends a chat request to the model's channels in routing order until one answers. A channel that speaks the
 * caller's protocol gets the caller's body (pass-through); any other gets the canonical request in its own
 * wire format (translated). Retries happen only before the first byte reached the caller. Returns the answer's report.
 */
export async function relayChat(dependencies: RelayDependencies, request: ChatRelayRequest, routes: readonly ChannelRoute[]): Promise<AnswerReport> {
  const { meter } = request;
  const model = request.price.model?.id ?? meter.modelId ?? '';
  const plan = new RoutePlan(dependencies.routing, routes, model, request.estimatedTokens ?? meter.promptTokensEstimate);
  // A stream ends early when its key or account changes so that a new request would be refused (live-streams.ts).
  const stop = request.stream && dependencies.liveStreams !== undefined ? new StreamStop(dependencies.liveStreams, meter.keyId, meter.accountId) : null;
  try {
    const report = await tryPool(dependencies, request.sink, plan, model, (candidate, signal) => attemptOne(dependencies, request, plan, candidate, signal, stop));
    if (report === null) throw exhaustedError(plan, [], model);
    return report;
  } finally {
    stop?.close();
  }
}

/** The operation the caller asked for, for the pass-through or translation choice. */
function requestedOperation(request: ChatRelayRequest): RequestedOperation {
  return { kind: 'chat', codec: request.codec, stream: request.stream };
}

/** The caller's body for a same-protocol channel, else the canonical request in the channel's wire format. */
function buildUpstreamRequest(adapter: UpstreamAdapter, route: ChannelRoute, credential: string, request: ChatRelayRequest, wire: WireChoice): UpstreamRequest {
  if (wire.kind === 'pass-through' && adapter.passThrough !== undefined) {
    const body = request.codec.wire.passThroughBody(request.body, route.upstreamModel, request.stream, request.callerBytes);
    const upstreamRequest = adapter.passThrough.build(route.channel, credential, wire.operation, route.upstreamModel, body);
    Object.assign(upstreamRequest.headers, request.clientHeaders);
    return upstreamRequest;
  }
  const chat = request.chat();
  const translated = { ...chat, stream: request.stream };
  const upstreamRequest = adapter.buildChatRequest(route.channel, credential, translated, route.upstreamModel);
  // What this channel left out is what the answer's header and usage row report.
  if (translated.droppedHostedTools !== undefined) chat.droppedHostedTools = translated.droppedHostedTools;
  return upstreamRequest;
}

/** One channel: done when the request is answered (or the caller left), failed when the next may try. */
async function attemptOne(dependencies: RelayDependencies, request: ChatRelayRequest, plan: RoutePlan, candidate: Candidate, signal: CallerSignal, stop: StreamStop | null): Promise<PoolOutcome<AnswerReport>> {
  const adapter = dependencies.adapters.get(candidate.route.channel.type) as UpstreamAdapter;
  const wire = request.guard != null ? GUARDED_WIRE : chooseWire(adapter, candidate.route.channel, requestedOperation(request));
  const build = (channelAdapter: UpstreamAdapter, route: ChannelRoute, credential: string): UpstreamRequest => buildUpstreamRequest(channelAdapter, route, credential, request, wire);
  const opened = await openAttempt(dependencies, request.sink, request.meter, plan, candidate, build, { stream: request.stream, signal: stop?.signalFor(signal) ?? signal });
  if (opened.kind === 'aborted') {
    // Stopped before the upstream answered: the caller gets the refusal a new request would get.
    if (stop?.reason != null && !signal.aborted) throw stop.reason;
    return { kind: 'done', value: callerLeft(request) };
  }
  if (opened.kind !== 'response') return opened;
  const { attempt, response } = opened;
  attempt.answered();
  attempt.chargeTokensToMeter();
  const onFirstByte = firstByteObserver(dependencies, request);
  const recorder = request.capture?.attempt(adapter, request.chat) ?? null;
  const result = await readingAnswer(attempt, () => wire.kind === 'pass-through'
    ? relayPassThrough(request, response, signal, onFirstByte, recorder, stop)
    : relayTranslated(adapter, request, response, signal, onFirstByte, recorder, stop));
  switch (result.kind) {
    case 'success':
      attempt.succeeded(result.report);
      return { kind: 'done', value: result.report };
    case 'aborted':
    // Stopped by a change of the key or account: no verdict on the channel.
    case 'stopped':
      attempt.aborted();
      return { kind: 'done', value: result.report };
    case 'broken':
      attempt.failed(result.failureClass, null);
      return { kind: 'done', value: result.report };
    case 'refused':
      // The channel answered; the refusal is the gateway's.
      attempt.aborted();
      throw withReport(result.error, result.report);
    case 'retry':
      attempt.failedBeforeAnswer(result.failureClass, null);
      return { kind: 'failed', failure: { failureClass: result.failureClass, retryAfterMs: null } };
    default: {
      const unknown: never = result;
      throw new Error(`unhandled relay result ${String(unknown)}`);
    }
  }
}

/** The first byte's time, for the time-to-first-byte histogram (the sink marks it for the usage row). */
function firstByteObserver(dependencies: RelayDependencies, request: ChatRelayRequest): () => void {
  return () => {
    dependencies.metrics.timeToFirstByte.labels(request.family.name, request.stream ? 'true' : 'false').observe((performance.now() - request.sink.startedAt) / 1000);
  };
}

async function readAll(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

/** Same protocol: the upstream's bytes go back untouched, usage is read on the side. */
async function relayPassThrough(
  request: ChatRelayRequest,
  response: UpstreamResponse,
  signal: CallerSignal,
  onFirstByte: () => void,
  recorder: AnswerRecorder | null,
  stop: StreamStop | null,
): Promise<RelayResult> {
  const { sink, meter, codec, price } = request;
  if (!request.stream) {
    let body: Buffer;
    try {
      body = await readAll(response.body);
    } catch (error) {
      if (signal.aborted) return aborted(request);
      return { kind: 'retry', failureClass: failureClassOf(error, true) };
    }
    onFirstByte();
    // Read as the upstream wrote it (the model it names tells an OpenAI search model's search).
    const usage = codec.usageFromResponseBody(body);
    if (request.answeringModel !== undefined) body = answerNamingModel(codec.wire, body, request.answeringModel);
    if (codec.callerAnswer !== undefined && response.status === 200) body = codec.callerAnswer(body);
    const contentType = headerValue(response.headers['content-type']) ?? 'application/json';
    const priced = price.priced(body, { usage }, codec.usageKey);
    sink.send({ status: response.status, body: priced.body, contentType, headers: Object.assign(request.responseHeaders, priced.headers) });
    const answered = body;
    const report: AnswerReport = { status: response.status, usage, price, answer: readOnce(() => codec.answerFactsOfBody(answered)) };
    if (recorder !== null && response.status === 200) {
      recorder.rawBody(body);
      recorder.complete();
    }
    return { kind: 'success', report };
  }
  const splitter = new SseEventSplitter();
  const observer = codec.createPassThroughObserver();
  // Every attempt of the request streams the same content type.
  request.responseHeaders['content-type'] = codec.streamContentType();
  const client = sink.openStream(request.responseHeaders, signal, onFirstByte);
  // The upstream accepted the request once an event other than an error arrived (a preamble counts).
  let accepted = false;
  const promptTokens = memoized(() => localPromptTokens(request));
  const billedUsage = async (): Promise<Usage | null> => usageOfDelivered(passThroughAnswer(observer, accepted, promptTokens));
  request.checkpoint(price, async () => ({ usage: await billedUsage() }), () => ({ usage: usageAtFirstByte(observer.reportedUsage(), meter.promptTokensEstimate) }));
  const stream: OpenStream = { request, response, client, signal, billedUsage, recorder, successCode: null, answer: () => observer.answerFacts() };
  // Events before the first answer event (preamble) are held, so an in-band error right after them is retried.
  let held: Buffer[] | null = [];
  // The event that completes the usage (OpenAI's usage chunk, Anthropic's message_delta, Gemini's closing chunk)
  // gets the cost of that usage.
  let costKey = codec.streamUsageKey();
  try {
    for await (const chunk of response.body) {
      recorder?.rawChunk(chunk);
      const events = splitter.push(chunk);
      if (events.length === 0) continue;
      let forward: Buffer[] = [];
      for (let event of events) {
        if (!observer.observe(event)) continue;
        if (codec.callerStreamEvent !== undefined) event = codec.callerStreamEvent(event);
        if (costKey !== null && observer.usageIsFinal()) {
          event = price.withCostInUsage(event, observer.reportedUsage(), costKey);
          costKey = null;
        }
        if (held !== null) {
          const opening = observer.opening(event);
          if (opening.kind === 'error' && (opening.status >= 500 || opening.status === 429)) {
            response.discard();
            return { kind: 'retry', failureClass: opening.status === 429 ? 'throttled' : 'stream_error' };
          }
          if (opening.kind !== 'error') accepted = true;
          if (opening.kind === 'preamble') {
            held.push(event);
            continue;
          }
          forward = held;
          held = null;
        }
        forward.push(event);
      }
      if (forward.length > 0) await client.write(forward.length === 1 ? (forward[0] as Buffer) : Buffer.concat(forward));
    }
    const rest = splitter.flush();
    const last = rest !== null && observer.observe(rest) ? [codec.callerStreamEvent?.(rest) ?? rest] : [];
    const tail = [...(held ?? []), ...last];
    // A stream the upstream closed with its own failure event reached the caller as is; the usage row says it failed.
    const failed = observer.failure?.() ?? null;
    return await endStream(stream, tail.length === 0 ? undefined : Buffer.concat(tail), failed === null ? null : { status: 502, code: 'upstream_error' });
  } catch (error) {
    if (stop?.reason != null && !signal.aborted) return await stopStream(stream, stop.reason);
    return await breakOffStream(stream, error, observer.completed() ? undefined : null);
  }
}

/** Every channel of a request with guardrails gets the canonical request, checked and masked. */
const GUARDED_WIRE: WireChoice = { kind: 'translate' };

/** Runs the output policies on a whole answer; the refusal when one blocks. */
async function checkAnswer(guard: RequestGuard | null | undefined, answer: ChatResponse): Promise<GatewayError | null> {
  if (guard == null || !guard.readsOutput) return null;
  try {
    await guard.checkAnswer(answer);
    return null;
  } catch (error) {
    if (isGuardrailBlock(error)) return error;
    throw error;
  }
}

/** The answer's stream through the output policies, when the request has any (or placeholders to restore). */
function guardedStream(guard: RequestGuard | null | undefined, parts: AsyncIterable<StreamPart>): AsyncIterable<StreamPart> {
  return guard != null && guard.readsOutput ? guard.guardStream(parts) : parts;
}

function isGuardrailBlock(error: unknown): error is GatewayError {
  return error instanceof GatewayError && error.code === 'guardrail_blocked';
}

/** The request's input counted locally (for a cut stream whose upstream reported none), else the route's estimate. */
async function localPromptTokens(request: ChatRelayRequest): Promise<number> {
  try {
    return (await countTokensLocally(request.chat())).inputTokens;
  } catch {
    return request.meter.promptTokensEstimate;
  }
}

function passThroughAnswer(observer: PassThroughStreamObserver, accepted: boolean, promptTokens: () => Promise<number>): DeliveredAnswer {
  return {
    reported: observer.reportedUsage(),
    final: observer.usageIsFinal(),
    accepted,
    deliveredText: () => observer.deliveredText(),
    promptTokens,
  };
}

/** The answer's facts read once, for the attempt's span and the request's trace alike. */
function readOnce(read: () => AnswerFacts): () => AnswerFacts {
  let facts: AnswerFacts | null = null;
  return () => (facts ??= read());
}

/** The first call's promise, for every call (the local prompt count is asked at each checkpoint and at the end). */
function memoized<T>(compute: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | null = null;
  return () => (result ??= compute());
}

/** Another protocol: the upstream's answer is parsed into canonical form and encoded in the caller's. */
async function relayTranslated(
  adapter: UpstreamAdapter,
  request: ChatRelayRequest,
  response: UpstreamResponse,
  signal: CallerSignal,
  onFirstByte: () => void,
  recorder: AnswerRecorder | null,
  stop: StreamStop | null,
): Promise<RelayResult> {
  const { sink, meter, codec, price } = request;
  const chat = request.chat();
  const model = request.answeringModel ?? chat.model;
  const warningHeader: Record<string, string> = chat.warnings.length > 0 ? { 'x-gateway-warnings': encodeURIComponent(chat.warnings.join('; ')).slice(0, 4000) } : {};
  // A successful answer that went without some hosted tool says so in a header and in its usage row's code.
  const dropped = chat.droppedHostedTools ?? [];
  if (dropped.length > 0) warningHeader['x-gateway-dropped-tools'] = dropped.join(', ');
  const successCode = dropped.length > 0 ? 'hosted_tool_dropped' : null;
  if (!request.stream) {
    let usage: Usage;
    let encoded: string;
    let parsed: ChatResponse;
    try {
      parsed = adapter.parseChatResponse(await readAll(response.body), chat);
      usage = parsed.usage;
      const refused = await checkAnswer(request.guard, parsed);
      if (refused !== null) return { kind: 'refused', error: refused, report: { status: refused.status, errorCode: refused.code, usage, price } };
      encoded = codec.encodeResponse(parsed, model);
    } catch (error) {
      if (signal.aborted) return aborted(request);
      return { kind: 'retry', failureClass: failureClassOf(error, true) };
    }
    onFirstByte();
    const priced = price.priced(encoded, { usage }, codec.usageKey);
    sink.send({ status: 200, body: priced.body, contentType: 'application/json', headers: Object.assign({}, request.responseHeaders, warningHeader, request.guard?.headers(), priced.headers) });
    const answered = parsed;
    const report: AnswerReport = { status: 200, errorCode: successCode, usage, price, answer: () => ({ model: answered.model, finishReasons: [answered.finishReason.raw ?? answered.finishReason.unified] }) };
    if (recorder !== null) {
      recorder.answer(parsed);
      recorder.complete();
    }
    return { kind: 'success', report };
  }
  const encoder = codec.createStreamEncoder({ model });
  const costKey = codec.streamUsageKey();
  const client = sink.openStream(Object.assign({}, request.responseHeaders, warningHeader, request.guard?.headers(), { 'content-type': codec.streamContentType() }), signal, onFirstByte);
  let usage: Usage | null = null;
  let streamError: { status: number; code: string } | null = null;
  const delivered: string[] = [];
  // Once the caller has the finish, the answer is complete: a later upstream fault must not turn it into an error.
  let finished = false;
  // Encoded parts before the first answer part (response start, usage), held so an in-band error after them is retried.
  let held: string | null = '';
  // The upstream accepted the request once a part other than an error arrived.
  let accepted = false;
  const promptTokens = memoized(() => localPromptTokens(request));
  const billedUsage = (): Promise<Usage | null> => usageOfDelivered({
    reported: usage,
    final: finished && usage !== null,
    accepted,
    deliveredText: () => delivered.join(''),
    promptTokens,
  });
  request.checkpoint(price, async () => ({ usage: await billedUsage() }), () => ({ usage: usageAtFirstByte(usage, meter.promptTokensEstimate) }));
  const facts = { model: null as string | null, finishReasons: [] as string[] };
  const stream: OpenStream = { request, response, client, signal, billedUsage, recorder, successCode, answer: () => facts };
  try {
    for await (const part of guardedStream(request.guard, adapter.parseChatStream(response.body, chat))) {
      if (!accepted && part.type !== 'error') accepted = true;
      recorder?.part(part);
      if (part.type === 'response-start') facts.model = part.model;
      else if (part.type === 'finish') facts.finishReasons.push(part.reason.raw ?? part.reason.unified);
      if (finished) {
        if (part.type === 'usage') usage = part.usage;
        continue;
      }
      if (part.type === 'usage') usage = part.usage;
      else if (part.type === 'finish') {
        finished = true;
        if (part.usage !== null) usage = part.usage;
      } else if (part.type === 'error') {
        // An upstream that fails in-band before anything reached the caller is retried like any other failure.
        if (held !== null && (part.status >= 500 || part.status === 429)) {
          response.discard();
          return { kind: 'retry', failureClass: part.status === 429 ? 'throttled' : 'stream_error' };
        }
        streamError = { status: part.status, code: part.code };
      } else if (part.type === 'text-delta' || part.type === 'tool-input-delta' || part.type === 'reasoning-delta') delivered.push(part.delta);
      else if (part.type === 'tool-input-start') delivered.push(part.toolName);
      let encoded = encoder.encode(part);
      // The finish part's encoding ends with the final usage (OpenAI's usage chunk, Anthropic's message_delta,
      // Gemini's closing chunk): it gets the cost of that usage.
      if (part.type === 'finish' && costKey !== null) encoded = price.withCostInUsage(encoded, usage, costKey);
      if (held !== null) {
        if (part.type === 'response-start' || part.type === 'usage') {
          held += encoded;
          continue;
        }
        const opening = held + encoded;
        held = null;
        await client.write(opening);
        continue;
      }
      await client.write(encoded);
    }
    const ended = await endStream(stream, (held ?? '') + encoder.end(), streamError);
    return streamError === null ? ended : { kind: 'broken', failureClass: 'stream_error', report: ended.report };
  } catch (error) {
    if (stop?.reason != null && !signal.aborted) return await stopStream(stream, stop.reason);
    // A guardrail stopped the answer: the stream ends with its refusal, billed for what was delivered.
    if (isGuardrailBlock(error) && !signal.aborted) return await stopStream(stream, error);
    return await breakOffStream(stream, error, finished ? encoder.end() : null);
  }
}

/** A chat stream opened to the caller, on either path: what its end needs. */
interface OpenStream {
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
async function endStream(stream: OpenStream, tail: string | Buffer | undefined, failed: { status: number; code: string } | null): Promise<Extract<RelayResult, { kind: 'success' }>> {
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
async function breakOffStream(stream: OpenStream, error: unknown, closing: string | Buffer | undefined | null): Promise<RelayResult> {
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
async function stopStream(stream: OpenStream, reason: GatewayError): Promise<RelayResult> {
  const { request, client } = stream;
  stream.response.discard();
  // Settled before the caller's stream ends, like every other end: its usage row exists once the caller has the
  // error event.
  const usage = await stream.billedUsage();
  client.end(request.codec.encodeStreamError(reason));
  return { kind: 'stopped', report: { status: reason.status, errorCode: reason.code, usage, price: request.price, answer: stream.answer } };
}

/** The caller left: billed for what was delivered. */
function callerLeft(request: ChatRelayRequest, usage: Usage | null = null): AnswerReport {
  return { status: 499, errorCode: 'client_closed_request', usage, price: request.price };
}

function aborted(request: ChatRelayRequest, usage: Usage | null = null): RelayResult {
  return { kind: 'aborted', report: callerLeft(request, usage) };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

