import { callerPreference } from './caller-preference.js';
import { modelChain } from './model-chain.js';
import { takeRequestedModels } from './requested-models.js';
import type { ClientCodec } from '../../codecs/client-codec.js';
import type { ChatRequest } from '../../ir/chat-request.js';
import type { RequestNeeds } from '../../ir/request-needs.js';
import { countTokensLocally } from '../../tokenize/count-tokens-locally.js';
import { relayModelChain } from '../../relay/relay-fallback.js';
import { planResponseCache } from '../../relay/response-cache/cache-plan.js';
import { serveFromCache } from '../../relay/response-cache/serve-from-cache.js';
import type { ChannelRoute } from '../../routing/catalog.js';
import type { GatewayServices } from '../../services.js';
import type { AdapterRegistry } from '../../upstreams/adapter-registry.js';
import { meteredRoute } from '../metered-route.js';
import { readJsonObject } from '../read-body.js';
import type { RequestContext, RouteHandler } from '../request-context.js';

/** What the gateway reads from a chat request before routing it, validated. */
export interface ChatEnvelope {
  /** How the caller's family reads and writes this request (per request when the body shapes the answer). */
  codec: ClientCodec;
  model: string;
  stream: boolean;
  includeUsage: boolean;
  sse: boolean;
  maxOutputTokens: number | null;
  promptTokensEstimate: number;
  /** Tools, images, JSON schema: routing sends the request only to channels whose model offers them. */
  needs: RequestNeeds;
  /** The canonical request, decoded now or on first use. */
  chat: () => ChatRequest;
  /** False when an answer may depend on more than the request (state stored upstream): never cached. */
  cacheable?: boolean;
  /** The channels that can take this request at all, when only some can (a 400 naming the field when none can). */
  narrowRoutes?: (routes: readonly ChannelRoute[], adapters: AdapterRegistry) => readonly ChannelRoute[];
}

/** One chat endpoint of one protocol family: its usage-log label and how it reads the envelope. */
export interface ChatEndpoint {
  /** Usage-log label, e.g. `anthropic-messages`. */
  protocol: string;
  readEnvelope(context: RequestContext, body: Record<string, unknown>): ChatEnvelope;
}

/** The specification's placeholder names, accepted for the real headers. */
const HEADER_ALIASES: Record<string, string> = { 'anthropic-version': 'vendorb-version' };

function clientHeaders(context: RequestContext, codec: ClientCodec): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of codec.passThroughHeaders) {
    const alias = HEADER_ALIASES[name];
    const value = context.request.headers[name] ?? (alias === undefined ? undefined : context.request.headers[alias]);
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/** Memoises a decode so the canonical request is built at most once, and only when needed. */
export function once<T>(build: () => T): () => T {
  let value: { built: T } | null = null;
  return () => (value ??= { built: build() }).built;
}

/**
 * The chat operation of any family (chat completions, messages, generateContent, responses) in the metered frame:
 * validate, resolve the model, narrow and fit its channels, admit, answer from the response cache or relay.
 */
export function chatRoute(services: GatewayServices, endpoint: ChatEndpoint): RouteHandler {
  return meteredRoute(services, endpoint.protocol, async (call) => {
    const { context, meter } = call;
    const body = await readJsonObject(context, services.config.maxBodyBytes);
    // The gateway's own fields (`models`, `provider`) leave the body before it is validated or sent anywhere.
    const requested = takeRequestedModels(context, endpoint.protocol, body);
    const preference = callerPreference(context, endpoint.protocol, body);
    const envelope = endpoint.readEnvelope(context, body);
    meter.expect({ stream: envelope.stream, promptTokens: envelope.promptTokensEstimate });
    const chain = await modelChain(services, {
      key: call.key,
      meter,
      model: envelope.model,
      requested,
      preference,
      ...(envelope.narrowRoutes === undefined ? {} : { narrowRoutes: envelope.narrowRoutes }),
      demand: {
        needs: envelope.needs,
        bodyBytes: context.bodyBytes ?? Number.POSITIVE_INFINITY,
        estimatedPromptTokens: envelope.promptTokensEstimate,
        outputTokens: envelope.maxOutputTokens ?? 0,
        countPromptTokens: async () => (await countTokensLocally(envelope.chat())).inputTokens,
      },
    });
    const { model } = chain;
    const cachePlan = envelope.cacheable === false ? null : planResponseCache(model.cache, context.request.headers, call.account.id, model.id, envelope.chat);
    const estimatedTokens = envelope.promptTokensEstimate + (envelope.maxOutputTokens ?? 0);
    const rateLimitHeaders = await call.admit({ model, estimatedTokens, fallbackModels: chain.fallbackModels });
    const cache = await serveFromCache(services.responseCache, cachePlan, {
      sink: call.sink,
      meter,
      codec: envelope.codec,
      stream: envelope.stream,
      includeUsage: envelope.includeUsage,
      sse: envelope.sse,
      model: envelope.model,
      headers: rateLimitHeaders,
      now: services.clock.now(),
    });
    if (cache.answered) return;
    await relayModelChain(call.relay, {
      sink: call.sink,
      meter,
      codec: envelope.codec,
      body,
      chat: envelope.chat,
      stream: envelope.stream,
      includeUsage: envelope.includeUsage,
      sse: envelope.sse,
      responseHeaders: cache.headers,
      clientHeaders: clientHeaders(context, envelope.codec),
      estimatedTokens,
      capture: cache.capture,
    }, chain.steps);
  });
}
