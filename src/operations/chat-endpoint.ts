import { callerPreference } from './caller-preference.js';
import { modelChain } from './model-chain.js';
import { takeRequestedModels } from './requested-models.js';
import { nativeRoutes } from '../relay/native-routes.js';
import type { ClientCodec } from '../codecs/client-codec.js';
import type { ChatEndpoint, ChatEnvelope } from '../codecs/family-route.js';
import { GatewayError } from '../errors/gateway-error.js';
import { RequestGuard } from '../guardrail-policies/request-guard.js';
import type { ResolvedGuardrails } from '../guardrail-policies/guardrail-book.js';
import { moderationCheck, type ModerationCheck } from './moderation-check.js';
import { countTokensLocally } from '../tokenize/count-tokens-locally.js';
import { relayModelChain } from '../relay/relay-fallback.js';
import { planResponseCache } from '../relay/response-cache/cache-plan.js';
import { serveFromCache, type CacheOutcome } from '../relay/response-cache/serve-from-cache.js';
import type { GatewayServices } from '../services.js';
import { meteredRoute, type MeteredCall } from './metered-frame.js';
import { parseJsonObjectAndBytes, readBody } from '../http/read-body.js';
import type { RequestContext, RouteHandler } from '../http/request-context.js';
import { forwardHeaderCustomer, readRequestIdentity } from '../customers/request-identity.js';

/** The specification's placeholder names, accepted for the real headers. */
const HEADER_ALIASES: Record<string, string> = { 'anthropic-version': 'vendorb-version' };

const NO_HEADERS: readonly string[] = [];

function clientHeaders(context: RequestContext, codec: ClientCodec): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of codec.passThrough?.headers ?? NO_HEADERS) {
    const alias = HEADER_ALIASES[name];
    const value = context.request.headers[name] ?? (alias === undefined ? undefined : context.request.headers[alias]);
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/**
 * The request's guardrails, its input checked (masked in place, or refused with `guardrail_blocked`), or null when no
 * policy is bound to its model, account or key. A request that needs upstream state (pass-through only) cannot be
 * checked on the canonical request, so it is refused rather than sent unchecked.
 */
async function guardRequest(services: GatewayServices, moderate: ModerationCheck, call: MeteredCall, resolved: ResolvedGuardrails | null, envelope: ChatEnvelope, model: string): Promise<RequestGuard | null> {
  if (resolved === null) return null;
  if (envelope.nativeOnly != null) {
    throw new GatewayError('unsupported_parameter', `'${envelope.nativeOnly.param}' cannot be used while guardrail policies apply to this request: they check the request's text, which this field keeps upstream.`, { param: envelope.nativeOnly.param });
  }
  const guard = new RequestGuard(resolved, call.meter.guardrails, {
    model,
    stream: envelope.stream,
    webhooks: services.guardrails.webhooks,
    moderate: (settings, text) => moderate(settings, text, { key: call.key, account: call.account }),
  });
  await guard.checkInput(envelope.chat());
  return guard;
}

/**
 * The chat operation of any family (chat completions, messages, generateContent, responses) in the metered frame:
 * validate, resolve the model, narrow and fit its channels, admit, answer from the response cache or relay.
 */
export function chatRoute(services: GatewayServices, endpoint: ChatEndpoint): RouteHandler {
  const moderate = moderationCheck(services);
  return meteredRoute(services, endpoint.protocol, async (call) => {
    const { context, meter } = call;
    const { body, bytes } = parseJsonObjectAndBytes(context, await readBody(context, services.config.maxBodyBytes), endpoint.keptMembers?.of(call.account.id));
    // The gateway's own fields (`models`, `provider`) leave the body before it is validated or sent anywhere. Only a
    // body that had some, or that gains the customer named in a header, is written again for a pass-through channel:
    // any other keeps the caller's own bytes (`passThroughBody`).
    const hadGatewayFields = endpoint.wire.gatewayFields.some((field) => field in body);
    const requested = takeRequestedModels(context, endpoint.wire, body);
    const givenPreference = callerPreference(context, endpoint.wire, body);
    const preference = givenPreference === null ? null : await givenPreference;
    meter.identity = readRequestIdentity(endpoint.wire.name, context.request.headers, body);
    const forwarded = forwardHeaderCustomer(endpoint.wire.name, context.request.headers, body, meter.identity);
    const callerBytes = hadGatewayFields || forwarded.changed ? null : bytes;
    const envelope = endpoint.readEnvelope(context, body, forwarded.added, callerBytes, call.account.id);
    const { nativeOnly } = envelope;
    meter.expect({ stream: envelope.stream, promptTokens: envelope.promptTokensEstimate });
    const chosen = modelChain(services, {
      key: call.key,
      meter,
      model: envelope.model,
      requested,
      preference,
      ...(nativeOnly == null ? {} : { narrowRoutes: (routes, adapters) => nativeRoutes(adapters, routes, { kind: 'chat', codec: envelope.codec, stream: envelope.stream }, nativeOnly) }),
      demand: {
        needs: envelope.needs,
        bodyBytes: context.bodyBytes ?? Number.POSITIVE_INFINITY,
        estimatedPromptTokens: envelope.promptTokensEstimate,
        outputTokens: envelope.maxOutputTokens ?? 0,
        countPromptTokens: async () => (await countTokensLocally(envelope.chat())).inputTokens,
      },
    });
    // Known at once unless the tokenizer must count the prompt near the model's context window.
    const chain = chosen instanceof Promise ? await chosen : chosen;
    const { model } = chain;
    // Guardrails run on the canonical request before anything is held or sent; none bound: nothing is done here.
    const policies = services.guardrails.forRequest(model.id, { accountId: call.account.id, projectId: call.key.projectId ?? null, keyId: call.key.id });
    const guard = policies === null ? null : await guardRequest(services, moderate, call, await policies, envelope, model.id);
    const cachePlan = envelope.cacheable === false || guard !== null ? null : planResponseCache(model.cache, context.request.headers, call.account.id, model.id, envelope.chat);
    const estimatedTokens = envelope.promptTokensEstimate + (envelope.maxOutputTokens ?? 0);
    const admitting = call.admit({ model, estimatedTokens, fallbackModels: chain.fallbackModels, hostedTools: envelope.hostedTools });
    const { rateLimitHeaders } = admitting instanceof Promise ? await admitting : admitting;
    // A request the cache does not serve goes to the relay as it is (no cache status header).
    const cache: CacheOutcome = cachePlan === null ? { answered: false, headers: { ...rateLimitHeaders }, capture: null } : await serveFromCache(services.responseCache, cachePlan, {
      sink: call.sink,
      codec: envelope.codec,
      stream: envelope.stream,
      model: envelope.model,
      pricedAt: model,
      headers: rateLimitHeaders,
      now: services.clock.now(),
    });
    if (cache.answered) return cache.report;
    return relayModelChain(call.relay, {
      sink: call.sink,
      family: context.family,
      attempts: call.attempts,
      checkpoint: call.checkpoint,
      codec: envelope.codec,
      body,
      callerBytes,
      chat: envelope.chat,
      stream: envelope.stream,
      responseHeaders: cache.headers,
      clientHeaders: clientHeaders(context, envelope.codec),
      estimatedTokens,
      capture: cache.capture,
      guard,
    }, chain.steps);
  });
}
