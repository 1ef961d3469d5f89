import type { ClientCodec } from '../codecs/client-codec.js';
import { SseEventSplitter } from '../codecs/openai-chat/sse-event-splitter.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';
import type { ChatRequest } from '../ir/chat-request.js';
import type { Usage } from '../ir/usage.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { orderCandidates } from '../routing/order-candidates.js';
import type { Logger } from '../shared/logger.js';
import type { AdapterRegistry } from '../upstreams/adapter-registry.js';
import type { UpstreamAdapter, UpstreamRequest, UpstreamResponse } from '../upstreams/upstream-adapter.js';
import { ClientStream, sendJsonBody } from './client-stream.js';
import type { CredentialRotation } from './credential-rotation.js';
import { passThroughBody } from './pass-through-body.js';
import type { RequestMeter } from './request-meter.js';
import { callUpstream, connectionFailure } from './upstream-call.js';
import { callerErrorFromUpstream } from './upstream-error.js';

export interface ChatRelayDependencies {
  adapters: AdapterRegistry;
  credentials: CredentialRotation;
  logger: Logger;
  maxAttempts: number;
}

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
}

/** An attempt that failed before anything reached the caller, so the next channel may try. */
type AttemptResult = { kind: 'done' } | { kind: 'retry'; failure: GatewayError };

const DONE: AttemptResult = { kind: 'done' };

/**
 * Sends a chat request to the model's channels in routing order until one answers. A channel that speaks the
 * caller's protocol gets the caller's body (pass-through); any other gets the canonical request in its own
 * wire format (translated). Retries happen only before the first byte reached the caller.
 */
export async function relayChat(dependencies: ChatRelayDependencies, request: ChatRelayRequest): Promise<void> {
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

async function attemptAll(dependencies: ChatRelayDependencies, request: ChatRelayRequest, signal: AbortSignal): Promise<void> {
  const { meter } = request;
  let lastFailure: GatewayError | null = null;
  for (const route of orderCandidates(request.routes).slice(0, dependencies.maxAttempts)) {
    const adapter = dependencies.adapters.get(route.channel.type);
    if (adapter === undefined) continue;
    meter.attempts += 1;
    meter.channelId = route.channel.id;
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
    const outcome = await callUpstream(adapter, route, upstreamRequest, { signal, stream: request.stream });
    switch (outcome.kind) {
      case 'aborted':
        meter.finish({ status: 499, errorCode: 'client_closed_request' });
        return;
      case 'retry':
        if (outcome.credentialRejected) dependencies.credentials.reportRejected(route.channel, credential);
        dependencies.logger.warn('upstream attempt failed', { requestId: request.context.requestId, channelId: route.channel.id, code: outcome.failure.code, status: outcome.failure.status });
        lastFailure = outcome.failure;
        continue;
      case 'refused':
        throw callerErrorFromUpstream(outcome.status, outcome.body);
      case 'response': {
        const result = passThrough
          ? await relayPassThrough(request, outcome.response, signal)
          : await relayTranslated(adapter, request, outcome.response, signal);
        if (result.kind === 'done') return;
        lastFailure = result.failure;
        continue;
      }
      default: {
        const unknown: never = outcome;
        throw new Error(`unhandled outcome ${String(unknown)}`);
      }
    }
  }
  throw lastFailure ?? new GatewayError('upstream_unavailable', `No upstream channel is available for model '${meter.modelId ?? ''}'.`);
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
async function relayPassThrough(request: ChatRelayRequest, response: UpstreamResponse, signal: AbortSignal): Promise<AttemptResult> {
  const { context, meter, codec } = request;
  if (!request.stream) {
    let body: Buffer;
    try {
      body = await readAll(response.body);
    } catch (error) {
      if (signal.aborted) return aborted(request);
      return { kind: 'retry', failure: connectionFailure(error) };
    }
    meter.markFirstByte();
    const contentType = headerValue(response.headers['content-type']) ?? 'application/json';
    sendJsonBody(context.response, response.status, body, contentType, request.responseHeaders);
    meter.finish({ status: response.status, usage: codec.usageFromResponseBody(body) });
    return DONE;
  }
  const splitter = new SseEventSplitter();
  const observer = codec.createPassThroughObserver({ includeUsage: request.includeUsage });
  const client = new ClientStream(context.response, { ...request.responseHeaders, 'content-type': streamContentType(request) }, signal, () => meter.markFirstByte());
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
    return DONE;
  } catch (error) {
    response.discard();
    if (signal.aborted) return aborted(request, observer.usage(meter.promptTokensEstimate));
    const failure = connectionFailure(error);
    if (!client.started) return { kind: 'retry', failure };
    client.end(codec.encodeStreamError(failure, { sse: request.sse }));
    meter.finish({ status: failure.status, errorCode: failure.code, usage: observer.usage(meter.promptTokensEstimate) });
    return DONE;
  }
}

/** Another protocol: the upstream's answer is parsed into canonical form and encoded in the caller's. */
async function relayTranslated(adapter: UpstreamAdapter, request: ChatRelayRequest, response: UpstreamResponse, signal: AbortSignal): Promise<AttemptResult> {
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
      return { kind: 'retry', failure: error instanceof GatewayError ? error : connectionFailure(error) };
    }
    meter.markFirstByte();
    sendJsonBody(context.response, 200, encoded, 'application/json', { ...request.responseHeaders, ...warningHeader });
    meter.finish({ status: 200, usage });
    return DONE;
  }
  const encoder = codec.createStreamEncoder({ model, includeUsage: request.includeUsage, sse: request.sse });
  const client = new ClientStream(context.response, { ...request.responseHeaders, ...warningHeader, 'content-type': streamContentType(request) }, signal, () => meter.markFirstByte());
  let usage: Usage | null = null;
  let streamError: { status: number; code: string } | null = null;
  let deltas = 0;
  try {
    for await (const part of adapter.parseChatStream(response.body, chat)) {
      if (part.type === 'usage') usage = part.usage;
      else if (part.type === 'finish' && part.usage !== null) usage = part.usage;
      else if (part.type === 'error') streamError = { status: part.status, code: part.code };
      else if (part.type === 'text-delta' || part.type === 'tool-input-delta' || part.type === 'reasoning-delta') deltas += 1;
      await client.write(encoder.encode(part));
    }
    client.end(encoder.end());
    meter.finish({ status: streamError?.status ?? 200, errorCode: streamError?.code ?? null, usage: usage ?? estimate(deltas, meter.promptTokensEstimate) });
    return DONE;
  } catch (error) {
    response.discard();
    if (signal.aborted) return aborted(request, usage ?? estimate(deltas, meter.promptTokensEstimate));
    const failure = error instanceof GatewayError ? error : connectionFailure(error);
    if (!client.started) return { kind: 'retry', failure };
    client.end(codec.encodeStreamError(failure, { sse: request.sse }));
    meter.finish({ status: failure.status, errorCode: failure.code, usage: usage ?? estimate(deltas, meter.promptTokensEstimate) });
    return DONE;
  }
}

function aborted(request: ChatRelayRequest, usage: Usage | null = null): AttemptResult {
  request.meter.finish({ status: 499, errorCode: 'client_closed_request', usage });
  return DONE;
}

/** Without reported usage (a stream cut short), each delivered delta counts as one output token. */
function estimate(deltas: number, promptTokens: number): Usage | null {
  if (deltas === 0) return null;
  return { input: { total: promptTokens, noCache: promptTokens, cacheRead: 0, cacheWrite: 0 }, output: { total: deltas, text: deltas, reasoning: 0 } };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
