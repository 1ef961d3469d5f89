import { encodeOpenAIStreamError } from '../codecs/openai-chat/encode-error.js';
import { findUsageInJson } from '../codecs/openai-chat/read-usage.js';
import { SseEventSplitter } from '../codecs/openai-chat/sse-event-splitter.js';
import { OpenAIStreamUsageObserver } from '../codecs/openai-chat/stream-usage-observer.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';
import type { Usage } from '../ir/usage.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { orderCandidates } from '../routing/order-candidates.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { AdapterRegistry } from '../upstreams/adapter-registry.js';
import { UpstreamConnectionError } from '../upstreams/http-transport.js';
import type { UpstreamResponse, UpstreamTimeouts } from '../upstreams/upstream-adapter.js';
import type { CredentialRotation } from './credential-rotation.js';
import type { RequestMeter } from './request-meter.js';
import { callerErrorFromUpstream, isRetryableUpstreamStatus, isUpstreamCredentialFailure } from './upstream-error.js';

export interface PassThroughDependencies {
  adapters: AdapterRegistry;
  credentials: CredentialRotation;
  logger: Logger;
  maxAttempts: number;
}

export interface PassThroughRequest {
  context: RequestContext;
  meter: RequestMeter;
  routes: readonly ChannelRoute[];
  body: Record<string, unknown>;
  stream: boolean;
  clientWantsUsage: boolean;
  responseHeaders: Record<string, string>;
}

const MAX_ERROR_BODY_BYTES = 64 * 1024;

function timeoutsOf(route: ChannelRoute, stream: boolean): UpstreamTimeouts {
  const settings = route.channel.settings;
  const read = (name: string, fallback: number): number => (typeof settings[name] === 'number' ? (settings[name] as number) : fallback);
  return { firstByteMs: read('first_byte_timeout_ms', stream ? 120_000 : 600_000), idleMs: read('idle_timeout_ms', 120_000) };
}

/**
 * OpenAI client → OpenAI-type upstream: the caller's body goes out with only the model name (and, for streams,
 * the usage request) changed; the upstream's bytes come back untouched while usage is read on the side.
 * Retries on the next channel when an upstream fails before anything reached the caller.
 */
export async function passThroughChat(dependencies: PassThroughDependencies, request: PassThroughRequest): Promise<void> {
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

async function attemptAll(dependencies: PassThroughDependencies, request: PassThroughRequest, signal: AbortSignal): Promise<void> {
  const { context, meter, body, stream } = request;
  const candidates = orderCandidates(request.routes).slice(0, dependencies.maxAttempts);
  let lastFailure: GatewayError | null = null;
  const streamOptions = typeof body.stream_options === 'object' && body.stream_options !== null ? body.stream_options : {};
  for (const route of candidates) {
    const adapter = dependencies.adapters.get(route.channel.type);
    if (adapter === undefined) continue;
    meter.attempts += 1;
    meter.channelId = route.channel.id;
    const upstreamBody = JSON.stringify(stream
      ? { ...body, model: route.upstreamModel, stream_options: { ...streamOptions, include_usage: true } }
      : { ...body, model: route.upstreamModel });
    const credential = dependencies.credentials.next(route.channel);
    const upstreamRequest = adapter.buildPassThrough(route.channel, credential, 'chat-completions', route.upstreamModel, upstreamBody);
    let response: UpstreamResponse;
    try {
      response = await adapter.transport(route.channel).send(upstreamRequest, { signal, timeouts: timeoutsOf(route, stream) });
    } catch (error) {
      if (signal.aborted) return finishAborted(meter, null);
      dependencies.logger.warn('upstream attempt failed', { requestId: context.requestId, channelId: route.channel.id, ...describeError(error) });
      lastFailure = connectionFailure(error);
      continue;
    }
    if (response.status >= 400) {
      const failure = await upstreamFailure(response, signal);
      if (failure === 'aborted') return finishAborted(meter, null);
      dependencies.logger.warn('upstream answered an error', { requestId: context.requestId, channelId: route.channel.id, status: response.status });
      if (isRetryableUpstreamStatus(response.status) || isUpstreamCredentialFailure(response.status)) {
        if (isUpstreamCredentialFailure(response.status)) dependencies.credentials.reportRejected(route.channel, credential);
        lastFailure = new GatewayError('upstream_error', 'The upstream provider failed to answer; all channels for this model were tried.', {
          status: response.status === 429 ? 503 : 502,
          ...(response.status === 429 ? { retryAfterSeconds: 1 } : {}),
        });
        continue;
      }
      throw callerErrorFromUpstream(response.status, failure);
    }
    if (stream) await relayStream(request, response, signal);
    else await relayJson(request, response, signal);
    return;
  }
  throw lastFailure ?? new GatewayError('upstream_unavailable', `No upstream channel is available for model '${meter.modelId ?? ''}'.`);
}

function connectionFailure(error: unknown): GatewayError {
  if (error instanceof UpstreamConnectionError && error.kind === 'timeout') {
    return new GatewayError('upstream_timeout', 'The upstream provider did not answer in time; all channels for this model were tried.');
  }
  return new GatewayError('upstream_error', 'The upstream provider could not be reached; all channels for this model were tried.');
}

/** Reads (a bounded part of) an upstream error body. */
async function upstreamFailure(response: UpstreamResponse, signal: AbortSignal): Promise<Buffer | 'aborted'> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      if (size < MAX_ERROR_BODY_BYTES) chunks.push(chunk);
      size += chunk.length;
    }
  } catch {
    if (signal.aborted) return 'aborted';
  }
  return Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY_BYTES);
}

function finishAborted(meter: RequestMeter, usage: Usage | null): void {
  meter.finish({ status: 499, errorCode: 'client_closed_request', usage });
}

async function relayJson(request: PassThroughRequest, response: UpstreamResponse, signal: AbortSignal): Promise<void> {
  const { context, meter } = request;
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of response.body) chunks.push(chunk);
  } catch (error) {
    if (signal.aborted) return finishAborted(meter, null);
    throw connectionFailure(error);
  }
  const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  const usage = findUsageInJson(body);
  const contentType = headerValue(response.headers['content-type']) ?? 'application/json';
  const out = context.response;
  out.statusCode = response.status;
  out.setHeader('content-type', contentType);
  out.setHeader('content-length', body.length);
  for (const name in request.responseHeaders) out.setHeader(name, request.responseHeaders[name] as string);
  meter.markFirstByte();
  out.end(body);
  meter.finish({ status: response.status, usage });
}

async function relayStream(request: PassThroughRequest, response: UpstreamResponse, signal: AbortSignal): Promise<void> {
  const { context, meter } = request;
  const out = context.response;
  const splitter = new SseEventSplitter();
  const observer = new OpenAIStreamUsageObserver(request.clientWantsUsage);
  out.statusCode = 200;
  out.setHeader('content-type', 'text/event-stream; charset=utf-8');
  out.setHeader('cache-control', 'no-cache');
  out.setHeader('x-accel-buffering', 'no');
  for (const name in request.responseHeaders) out.setHeader(name, request.responseHeaders[name] as string);
  out.flushHeaders();
  meter.markFirstByte();
  try {
    for await (const chunk of response.body) {
      const events = splitter.push(chunk);
      if (events.length === 0) continue;
      const forward = events.filter((event) => observer.observe(event));
      if (forward.length === 0) continue;
      if (!out.write(forward.length === 1 ? (forward[0] as Buffer) : Buffer.concat(forward))) await drained(out, signal);
    }
    const rest = splitter.flush();
    if (rest !== null && observer.observe(rest)) out.write(rest);
    out.end();
    meter.finish({ status: 200, usage: observer.usage ?? estimatedUsage(observer, meter.promptTokensEstimate) });
  } catch (error) {
    response.discard();
    if (signal.aborted) return finishAborted(meter, observer.usage ?? estimatedUsage(observer, meter.promptTokensEstimate));
    const failure = connectionFailure(error);
    if (!out.destroyed) out.end(encodeOpenAIStreamError(failure));
    meter.finish({ status: failure.status, errorCode: failure.code, usage: observer.usage ?? estimatedUsage(observer, meter.promptTokensEstimate) });
  }
}

/** Without a usage chunk (stream cut short), each delivered delta event counts as one output token. */
function estimatedUsage(observer: OpenAIStreamUsageObserver, promptTokens: number): Usage | null {
  if (observer.deltaEvents === 0) return null;
  const output = Math.max(0, observer.deltaEvents - 1);
  return { input: { total: promptTokens, noCache: promptTokens, cacheRead: 0, cacheWrite: 0 }, output: { total: output, text: output, reasoning: 0 } };
}

function drained(out: NodeJS.WritableStream, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      out.off('drain', onDrain);
      reject(signal.reason);
    };
    const onDrain = (): void => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    out.once('drain', onDrain);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

