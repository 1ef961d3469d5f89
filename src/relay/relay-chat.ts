import type { ClientCodec } from '../codecs/client-codec.js';
import { SseEventSplitter } from '../codecs/openai-chat/sse-event-splitter.js';
import type { RequestContext } from '../http/request-context.js';
import type { ChatRequest } from '../ir/chat-request.js';
import type { Usage } from '../ir/usage.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { protocolFamily } from '../metrics/gateway-metrics.js';
import type { UpstreamFailureClass } from '../routing/failure-class.js';
import { RoutePlan, type Candidate } from '../routing/route-plan.js';
import type { UpstreamAdapter, UpstreamRequest, UpstreamResponse } from '../upstreams/upstream-adapter.js';
import { ClientStream, sendJsonBody } from './client-stream.js';
import { passThroughBody } from './pass-through-body.js';
import type { RelayDependencies } from './relay-dependencies.js';
import type { RequestMeter } from './request-meter.js';
import { callUpstream, exhaustedError, failureClassOf, timeoutsOf, upstreamFailureError, type FailedAttempt } from './upstream-call.js';
import { callerErrorFromUpstream } from './upstream-error.js';
import { anotherKey, UpstreamAttempt } from './upstream-attempt.js';

export interface ChatRelayRequest {
  context: RequestContext;
  meter: RequestMeter;
  codec: ClientCodec;
  routes: readonly ChannelRoute[];
  /** The caller's body, for the pass-through path. */
  body: Record<string, unknown>;
  /** The canonical request, decoded on first use (only the translated path needs it). */
  chat: () => ChatRequest;
  stream: boolean;
  /** OpenAI callers: `stream_options.include_usage`. */
  includeUsage: boolean;
  /** Gemini callers: SSE framing (`alt=sse`) or the streamed JSON array. */
  sse: boolean;
  /** Extra response headers (rate-limit headers). */
  responseHeaders: Record<string, string>;
  /** Caller headers a same-protocol upstream should see (the codec's passThroughHeaders). */
  clientHeaders: Record<string, string>;
  /** Tokens the request may take (prompt estimate plus the output cap), for per-channel-model TPM; default the prompt estimate. */
  estimatedTokens?: number;
}

/**
 * How one attempt ended once the upstream had answered 2xx: fully relayed, the caller left, broken off after
 * bytes reached the caller (the stream ended with an error event), or failed before the first byte (retry).
 */
type RelayResult =
  | { kind: 'success' }
  | { kind: 'aborted' }
  | { kind: 'broken'; failureClass: UpstreamFailureClass }
  | { kind: 'retry'; failureClass: UpstreamFailureClass };

const SUCCESS: RelayResult = { kind: 'success' };
const ABORTED: RelayResult = { kind: 'aborted' };

/**
 * Sends a chat request to the model's channels in routing order until one answers. A channel that speaks the
 * caller's protocol gets the caller's body (pass-through); any other gets the canonical request in its own
 * wire format (translated). Retries happen only before the first byte reached the caller.
 */
export async function relayChat(dependencies: RelayDependencies, request: ChatRelayRequest): Promise<void> {
  const { context } = request;
  const abort = new AbortController();
  const onClose = (): void => {
    if (!context.response.writableFinished) abort.abort(new Error('client disconnected'));
  };
  context.response.once('close', onClose);
  try {
    await attemptAll(dependencies, request, abort.signal);
  } finally {
    context.response.off('close', onClose);
  }
}

function takesPassThrough(adapter: UpstreamAdapter, request: ChatRelayRequest): boolean {
  if (adapter.protocol !== request.codec.protocol) return false;
  // Gemini's JSON-array stream is rebuilt from canonical parts; the upstream is always asked for SSE.
  return !(request.codec.protocol === 'gemini' && request.stream && !request.sse);
}

async function attemptAll(dependencies: RelayDependencies, request: ChatRelayRequest, signal: AbortSignal): Promise<void> {
  const { meter } = request;
  const model = meter.model?.id ?? meter.modelId ?? '';
  const plan = new RoutePlan(dependencies.routing, request.routes, model, request.estimatedTokens ?? meter.promptTokensEstimate);
  const failures: FailedAttempt[] = [];
  let candidate = await plan.next();
  while (candidate !== null) {
    let failure: FailedAttempt | null;
    try {
      failure = await attemptOne(dependencies, request, plan, candidate, signal);
    } finally {
      // Settles nothing when the attempt already has its verdict; frees a probe slot when it threw.
      candidate.ticket.release();
    }
    if (failure === null) return;
    failures.push(failure);
    candidate = (failure.failureClass === 'credential' ? anotherKey(dependencies, plan, candidate) : null) ?? (await plan.next());
  }
  throw exhaustedError(plan, failures, model);
}

/** One channel: null when the request is answered (or the caller left), the failure when the next may try. */
async function attemptOne(dependencies: RelayDependencies, request: ChatRelayRequest, plan: RoutePlan, candidate: Candidate, signal: AbortSignal): Promise<FailedAttempt | null> {
  const { route } = candidate;
  const adapter = dependencies.adapters.get(route.channel.type) as UpstreamAdapter;
  const credential = dependencies.credentials.next(route.channel);
  const passThrough = takesPassThrough(adapter, request);
  let upstreamRequest: UpstreamRequest;
  if (passThrough) {
    const body = passThroughBody(adapter.protocol, request.body, route.upstreamModel, request.stream);
    upstreamRequest = adapter.buildPassThrough(route.channel, credential, { kind: 'chat', stream: request.stream }, route.upstreamModel, body);
    Object.assign(upstreamRequest.headers, request.clientHeaders);
  } else {
    upstreamRequest = adapter.buildChatRequest(route.channel, credential, { ...request.chat(), stream: request.stream }, route.upstreamModel);
  }
  const attempt = new UpstreamAttempt(dependencies, candidate, credential, request.context.requestId, request.meter);
  const timeouts = plan.timeouts(candidate, timeoutsOf(route, request.stream));
  const outcome = await callUpstream(adapter, route, upstreamRequest, { signal, timeouts, now: dependencies.routing.clock.now() });
  switch (outcome.kind) {
    case 'aborted':
      attempt.aborted();
      request.meter.finish({ status: 499, errorCode: 'client_closed_request' });
      return null;
    case 'retry':
      attempt.failedBeforeAnswer(outcome.failureClass, outcome.retryAfterMs);
      return { failureClass: outcome.failureClass, retryAfterMs: outcome.retryAfterMs };
    case 'refused':
      attempt.refused();
      throw callerErrorFromUpstream(outcome.status, outcome.body);
    case 'response': {
      attempt.chargeTokensToMeter();
      const onFirstByte = firstByteObserver(dependencies, request);
      const result = passThrough
        ? await relayPassThrough(request, outcome.response, signal, onFirstByte)
        : await relayTranslated(adapter, request, outcome.response, signal, onFirstByte);
      switch (result.kind) {
        case 'success':
          attempt.succeeded();
          return null;
        case 'aborted':
          attempt.aborted();
          return null;
        case 'broken':
          attempt.failed(result.failureClass, null);
          return null;
        case 'retry':
          attempt.failedBeforeAnswer(result.failureClass, null);
          return { failureClass: result.failureClass, retryAfterMs: null };
        default: {
          const unknown: never = result;
          throw new Error(`unhandled relay result ${String(unknown)}`);
        }
      }
    }
    default: {
      const unknown: never = outcome;
      throw new Error(`unhandled outcome ${String(unknown)}`);
    }
  }
}

/** Marks the first byte for the usage row and the time-to-first-byte histogram. */
function firstByteObserver(dependencies: RelayDependencies, request: ChatRelayRequest): () => void {
  return () => {
    request.meter.markFirstByte();
    dependencies.metrics.timeToFirstByte.labels(protocolFamily(request.codec.protocol), request.stream ? 'true' : 'false').observe((performance.now() - request.context.startedAt) / 1000);
  };
}

async function readAll(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

function streamContentType(request: ChatRelayRequest): string {
  return request.codec.protocol === 'gemini' && !request.sse ? 'application/json; charset=utf-8' : 'text/event-stream; charset=utf-8';
}

/** Same protocol: the upstream's bytes go back untouched, usage is read on the side. */
async function relayPassThrough(request: ChatRelayRequest, response: UpstreamResponse, signal: AbortSignal, onFirstByte: () => void): Promise<RelayResult> {
  const { context, meter, codec } = request;
  if (!request.stream) {
    let body: Buffer;
    try {
      body = await readAll(response.body);
    } catch (error) {
      if (signal.aborted) return aborted(request);
      return { kind: 'retry', failureClass: failureClassOf(error, true) };
    }
    onFirstByte();
    const contentType = headerValue(response.headers['content-type']) ?? 'application/json';
    sendJsonBody(context.response, response.status, body, contentType, request.responseHeaders);
    meter.finish({ status: response.status, usage: codec.usageFromResponseBody(body) });
    return SUCCESS;
  }
  const splitter = new SseEventSplitter();
  const observer = codec.createPassThroughObserver({ includeUsage: request.includeUsage });
  const client = new ClientStream(context.response, { ...request.responseHeaders, 'content-type': streamContentType(request) }, signal, onFirstByte);
  try {
    for await (const chunk of response.body) {
      const events = splitter.push(chunk);
      if (events.length === 0) continue;
      const forward = events.filter((event) => observer.observe(event));
      if (forward.length > 0) await client.write(forward.length === 1 ? (forward[0] as Buffer) : Buffer.concat(forward));
    }
    const rest = splitter.flush();
    client.end(rest !== null && observer.observe(rest) ? rest : undefined);
    meter.finish({ status: 200, usage: observer.usage(meter.promptTokensEstimate) });
    return SUCCESS;
  } catch (error) {
    response.discard();
    if (signal.aborted) return aborted(request, observer.usage(meter.promptTokensEstimate));
    const failureClass = failureClassOf(error, true);
    if (!client.started) return { kind: 'retry', failureClass };
    if (observer.completed()) {
      // The answer's end already reached the caller: close its stream normally.
      client.end();
      meter.finish({ status: 200, usage: observer.usage(meter.promptTokensEstimate) });
      return SUCCESS;
    }
    const failure = upstreamFailureError(failureClass);
    client.end(codec.encodeStreamError(failure, { sse: request.sse }));
    meter.finish({ status: failure.status, errorCode: failure.code, usage: observer.usage(meter.promptTokensEstimate) });
    return { kind: 'broken', failureClass };
  }
}

/** Another protocol: the upstream's answer is parsed into canonical form and encoded in the caller's. */
async function relayTranslated(adapter: UpstreamAdapter, request: ChatRelayRequest, response: UpstreamResponse, signal: AbortSignal, onFirstByte: () => void): Promise<RelayResult> {
  const { context, meter, codec } = request;
  const chat = request.chat();
  const model = chat.model;
  const warningHeader: Record<string, string> = chat.warnings.length > 0 ? { 'x-gateway-warnings': encodeURIComponent(chat.warnings.join('; ')).slice(0, 4000) } : {};
  if (!request.stream) {
    let usage: Usage;
    let encoded: string;
    try {
      const parsed = adapter.parseChatResponse(await readAll(response.body), chat);
      usage = parsed.usage;
      encoded = codec.encodeResponse(parsed, model);
    } catch (error) {
      if (signal.aborted) return aborted(request);
      return { kind: 'retry', failureClass: failureClassOf(error, true) };
    }
    onFirstByte();
    sendJsonBody(context.response, 200, encoded, 'application/json', { ...request.responseHeaders, ...warningHeader });
    meter.finish({ status: 200, usage });
    return SUCCESS;
  }
  const encoder = codec.createStreamEncoder({ model, includeUsage: request.includeUsage, sse: request.sse });
  const client = new ClientStream(context.response, { ...request.responseHeaders, ...warningHeader, 'content-type': streamContentType(request) }, signal, onFirstByte);
  let usage: Usage | null = null;
  let streamError: { status: number; code: string } | null = null;
  let deltas = 0;
  // Once the caller has the finish, the answer is complete: a later upstream fault must not turn it into an error.
  let finished = false;
  try {
    for await (const part of adapter.parseChatStream(response.body, chat)) {
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
        if (!client.started && (part.status >= 500 || part.status === 429)) {
          response.discard();
          return { kind: 'retry', failureClass: 'stream_error' };
        }
        streamError = { status: part.status, code: part.code };
      } else if (part.type === 'text-delta' || part.type === 'tool-input-delta' || part.type === 'reasoning-delta') deltas += 1;
      await client.write(encoder.encode(part));
    }
    client.end(encoder.end());
    meter.finish({ status: streamError?.status ?? 200, errorCode: streamError?.code ?? null, usage: usage ?? estimate(deltas, meter.promptTokensEstimate) });
    return streamError === null ? SUCCESS : { kind: 'broken', failureClass: 'stream_error' };
  } catch (error) {
    response.discard();
    if (signal.aborted) return aborted(request, usage ?? estimate(deltas, meter.promptTokensEstimate));
    const failureClass = failureClassOf(error, true);
    if (!client.started) return { kind: 'retry', failureClass };
    if (finished) {
      client.end(encoder.end());
      meter.finish({ status: 200, usage: usage ?? estimate(deltas, meter.promptTokensEstimate) });
      return SUCCESS;
    }
    const failure = upstreamFailureError(failureClass);
    client.end(codec.encodeStreamError(failure, { sse: request.sse }));
    meter.finish({ status: failure.status, errorCode: failure.code, usage: usage ?? estimate(deltas, meter.promptTokensEstimate) });
    return { kind: 'broken', failureClass };
  }
}

function aborted(request: ChatRelayRequest, usage: Usage | null = null): RelayResult {
  request.meter.finish({ status: 499, errorCode: 'client_closed_request', usage });
  return ABORTED;
}

/** Without reported usage (a stream cut short), each delivered delta counts as one output token. */
function estimate(deltas: number, promptTokens: number): Usage | null {
  if (deltas === 0) return null;
  return { input: { total: promptTokens, noCache: promptTokens, cacheRead: 0, cacheWrite: 0 }, output: { total: deltas, text: deltas, reasoning: 0 } };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

