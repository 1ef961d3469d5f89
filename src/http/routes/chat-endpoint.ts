import { callerPreference } from './caller-preference.js';
import { modelChain } from './model-chain.js';
import { takeRequestedModels } from './requested-models.js';
import type { ClientCodec } from '../../codecs/client-codec.js';
import { toGatewayError } from '../../errors/gateway-error.js';
import type { ChatRequest } from '../../ir/chat-request.js';
import type { RequestNeeds } from '../../ir/request-needs.js';
import { countTokensLocally } from '../../tokenize/count-tokens-locally.js';
import { admit } from '../../relay/admission.js';
import { relayModelChain } from '../../relay/relay-fallback.js';
import { relayDependencies } from '../../relay/relay-dependencies.js';
import { RequestMeter } from '../../relay/request-meter.js';
import type { GatewayServices } from '../../services.js';
import { authenticate } from '../authenticate.js';
import { responseSink } from '../response-sink.js';
import { readJsonObject } from '../read-body.js';
import type { RequestContext, RouteHandler } from '../request-context.js';

/** What the gateway reads from a chat request before routing it, validated. */
export interface ChatEnvelope {
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
}

/** One chat endpoint of one protocol family: its codec, key forms, and how it reads the envelope. */
export interface ChatEndpoint {
  /** Usage-log label, e.g. `anthropic-messages`. */
  protocol: string;
  codec: ClientCodec;
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

/** The chat route of any family: authenticate, validate, price, admit, relay, settle once. */
export function chatRoute(services: GatewayServices, endpoint: ChatEndpoint): RouteHandler {
  const relay = relayDependencies(services);
  return async (context) => {
    const { key, account } = await authenticate(context, services);
    const meter = new RequestMeter(services, context.requestId, account.id, key.id, endpoint.protocol, context.path, context.startedAt);
    try {
      const body = await readJsonObject(context, services.config.maxBodyBytes);
      const requested = takeRequestedModels(context, endpoint.protocol, body);
      const envelope = endpoint.readEnvelope(context, body);
      meter.stream = envelope.stream;
      const chain = await modelChain(services, {
        key,
        meter,
        model: envelope.model,
        requested,
        preference: callerPreference(context, endpoint.protocol, body),
        demand: {
          needs: envelope.needs,
          bodyBytes: context.bodyBytes ?? Number.POSITIVE_INFINITY,
          estimatedPromptTokens: envelope.promptTokensEstimate,
          outputTokens: envelope.maxOutputTokens ?? 0,
          countPromptTokens: async () => (await countTokensLocally(envelope.chat())).inputTokens,
        },
      });
      meter.promptTokensEstimate = envelope.promptTokensEstimate;
      const estimatedTokens = envelope.promptTokensEstimate + (envelope.maxOutputTokens ?? 0);
      const rateLimitHeaders = await admit(services, {
        family: context.family,
        key,
        account,
        model: chain.model,
        fallbackModels: chain.fallbackModels,
        estimatedTokens,
        meter,
      });
      await relayModelChain(
        relay,
        {
          sink: responseSink(context),
          meter,
          codec: endpoint.codec,
          body,
          chat: envelope.chat,
          stream: envelope.stream,
          includeUsage: envelope.includeUsage,
          sse: envelope.sse,
          responseHeaders: rateLimitHeaders,
          clientHeaders: clientHeaders(context, endpoint.codec),
          estimatedTokens,
        },
        chain.steps,
      );
    } catch (error) {
      const failure = toGatewayError(error);
      meter.finish({ status: failure.status, errorCode: failure.code });
      throw error;
    }
  };
}
