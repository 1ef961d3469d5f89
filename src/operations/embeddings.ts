import { resolveModel } from './resolve-model.js';
import type { EmbeddingsEndpoint } from '../codecs/family-route.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Usage } from '../ir/usage.js';
import { AnswerPrice } from '../billing/answer-report.js';
import { embeddingsExchange } from '../relay/unary-exchanges.js';
import { relayUnary } from '../relay/relay-unary.js';
import type { GatewayServices } from '../services.js';
import { estimateTextTokens } from '../shared/estimate-tokens.js';
import { meteredRoute } from './metered-frame.js';
import { guardCallerTexts, guardHeaders } from './guard-texts.js';
import { moderationCheck } from './moderation-check.js';
import { forwardHeaderCustomer, readRequestIdentity } from '../customers/request-identity.js';
import { readJsonObject } from '../http/read-body.js';
import type { RouteHandler } from '../http/request-context.js';

function inputTokensOf(usage: number): Usage {
  return { input: { total: usage, noCache: usage, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } };
}

/** A text the guardrails read in the caller's body, and where a masked text is written back. */
interface BodyText {
  text: string;
  readonly original: string;
  write(): void;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The text parts of a Gemini `Content`. */
function contentTexts(content: unknown, into: BodyText[]): void {
  if (!isObject(content) || !Array.isArray(content.parts)) return;
  for (const part of content.parts) {
    if (!isObject(part) || typeof part.text !== 'string') continue;
    const slot: BodyText = { text: part.text, original: part.text, write: () => { part.text = slot.text; } };
    into.push(slot);
  }
}

/**
 * The caller texts of an embeddings body, whichever family wrote it: OpenAI's `input` (a string or strings), Gemini's
 * `content.parts[].text` and `requests[].content.parts[].text`. The body is what a pass-through channel is sent, so
 * masking writes into it and the request is decoded again.
 */
function bodyTexts(body: Record<string, unknown>): BodyText[] {
  const texts: BodyText[] = [];
  const { input } = body;
  if (typeof input === 'string') {
    const slot: BodyText = { text: input, original: input, write: () => { body.input = slot.text; } };
    texts.push(slot);
  } else if (Array.isArray(input)) {
    input.forEach((entry, index) => {
      if (typeof entry !== 'string') return;
      const slot: BodyText = { text: entry, original: entry, write: () => { input[index] = slot.text; } };
      texts.push(slot);
    });
  }
  contentTexts(body.content, texts);
  if (Array.isArray(body.requests)) for (const request of body.requests) if (isObject(request)) contentTexts(request.content, texts);
  return texts;
}

/** The embeddings operation of any family, in the metered frame. */
export function embeddingsRoute(services: GatewayServices, endpoint: EmbeddingsEndpoint): RouteHandler {
  const moderate = moderationCheck(services);
  return meteredRoute(services, endpoint.label, async (call) => {
    const { context, meter } = call;
    const body = await readJsonObject(context, services.config.maxBodyBytes);
    meter.identity = readRequestIdentity(endpoint.wire.name, context.request.headers, body);
    forwardHeaderCustomer(endpoint.wire.name, context.request.headers, body, meter.identity);
    let { request, encode } = endpoint.decode(context, body);
    const { model, routes } = resolveModel(services, meter, request.model, { kind: 'embedding', endpoint: `POST ${context.path}` });
    // Input guardrails before anything is held or sent; a masked text is written into the body and decoded again.
    let texts: BodyText[] = [];
    const guard = await guardCallerTexts(call, moderate, model.id, () => (texts = bodyTexts(body)));
    const changed = guard === null ? [] : texts.filter((slot) => slot.text !== slot.original);
    for (const slot of changed) slot.write();
    if (changed.length > 0) ({ request, encode } = endpoint.decode(context, body));
    const estimate = request.inputs.reduce((sum, input) => sum + estimateTextTokens(input), 0);
    const { rateLimitHeaders } = await call.admit({ model, estimatedTokens: estimate, shape: { promptTokens: estimate } });
    const result = await relayUnary(call.relay, call.sink, call.attempts, routes, embeddingsExchange(endpoint, body, request, encode, estimate), { model: model.id });
    if (result === null) throw new GatewayError('bad_request', `Model '${model.id}' has no channel that serves embeddings.`, { param: 'model' });
    const usage = inputTokensOf(result.inputTokens);
    const price = new AnswerPrice(model);
    const priced = price.priced(result.body, { usage }, endpoint.usageKey);
    call.sink.send({ status: 200, body: priced.body, contentType: 'application/json', headers: { ...rateLimitHeaders, ...guardHeaders(guard), ...priced.headers } });
    return { status: 200, usage, price };
  });
}
