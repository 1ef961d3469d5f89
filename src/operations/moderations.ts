import { badRequest } from '../codecs/openai-chat/bad-request.js';
import type { Usage } from '../ir/usage.js';
import { AnswerPrice } from '../billing/answer-report.js';
import { relayUnary } from '../relay/relay-unary.js';
import type { GatewayServices } from '../services.js';
import { estimateTextTokens } from '../shared/estimate-tokens.js';
import { readJsonObject } from '../http/read-body.js';
import type { RouteHandler } from '../http/request-context.js';
import { upstreamJson } from './media-fields.js';
import { mediaRoute, noChannelFor, resolveMediaModel } from './media-route.js';

/** OpenAI's default when a request names no model. */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';
/** Tokens counted for an image input of a multimodal moderation, for limits and per-token prices. */
const IMAGE_INPUT_TOKENS = 85;

/** Text of `input` (a string, strings, or multimodal parts) as an estimate of its tokens; 400 when malformed. */
function inputTokens(input: unknown): number {
  if (typeof input === 'string') return estimateTextTokens(input);
  if (Array.isArray(input) && input.length > 0) {
    let total = 0;
    for (const entry of input) {
      if (typeof entry === 'string') total += estimateTextTokens(entry);
      else if (entry !== null && typeof entry === 'object' && (entry as { type?: unknown }).type === 'text' && typeof (entry as { text?: unknown }).text === 'string') {
        total += estimateTextTokens((entry as { text: string }).text);
      } else if (entry !== null && typeof entry === 'object' && (entry as { type?: unknown }).type === 'image_url') total += IMAGE_INPUT_TOKENS;
      else throw badRequest('input', "'input' entries must be strings or {type: 'text' | 'image_url'} parts.");
    }
    return total;
  }
  throw badRequest('input', "'input' must be a non-empty string, an array of strings, or an array of text and image parts.");
}

/**
 * POST /v1/moderations: passed through to OpenAI-wire channels. Free unless the model is priced (per request, or per
 * million input tokens on the local estimate, since moderation answers report no usage); always authenticated,
 * admitted against the key's limits and logged like every billed endpoint.
 */
export function moderationsRoute(services: GatewayServices): RouteHandler {
  return mediaRoute(services, 'openai-moderations', async (call) => {
    const body = await readJsonObject(call.context, services.config.maxBodyBytes);
    const modelId = body.model === undefined || body.model === null ? DEFAULT_MODERATION_MODEL : body.model;
    if (typeof modelId !== 'string' || modelId.trim() === '') throw badRequest('model', "'model' must be a non-empty string.");
    const estimate = inputTokens(body.input);
    const { model, routes } = resolveMediaModel(call, modelId, 'moderation', 'POST /v1/moderations');
    const usage: Usage = { input: { total: estimate, noCache: estimate, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } };
    const { rateLimitHeaders: headers } = await call.admit({ model, estimatedTokens: estimate, shape: { promptTokens: estimate }, maxUsage: { tokens: usage } });
    const answer = await relayUnary(call.relay, call.sink, call.attempts, routes, {
      request(adapter, route, credential) {
        const build = adapter.media?.openAIMediaRequest;
        return build === undefined ? null : build(route.channel, credential, '/moderations', route.upstreamModel, upstreamJson({ ...body, model: modelId }, route.upstreamModel));
      },
      parse: (_adapter, _route, upstreamBody) => upstreamBody,
    }, { model: model.id });
    if (answer === null) throw noChannelFor(model, 'moderations');
    const price = new AnswerPrice(model);
    call.sink.send({ status: 200, body: answer, contentType: 'application/json', headers: { ...headers, ...price.priced(answer, { usage, billable: {} }, null).headers } });
    return { status: 200, usage, billable: {}, price };
  });
}
