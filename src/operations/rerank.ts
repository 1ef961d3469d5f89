import { AnswerPrice } from '../billing/answer-report.js';
import { searchUnitsOf } from '../billing/search-units.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RerankRequest, RerankResponse } from '../ir/rerank.js';
import type { Usage } from '../ir/usage.js';
import { relayUnary } from '../relay/relay-unary.js';
import type { GatewayServices } from '../services.js';
import { estimateTextTokens } from '../shared/estimate-tokens.js';
import { meteredRoute } from './metered-frame.js';
import { guardCallerTexts, guardHeaders } from './guard-texts.js';
import { moderationCheck } from './moderation-check.js';
import { readJsonObject } from '../http/read-body.js';
import type { RouteHandler } from '../http/request-context.js';
import { parseRerankRequest } from './rerank-request.js';
import { resolveModel } from './resolve-model.js';

function inputTokensOf(tokens: number): Usage {
  return { input: { total: tokens, noCache: tokens, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } };
}

/** What a rerank request is billed by, under some count of each text's tokens. */
interface RerankMeasure {
  /** The query read with each document, plus every document (how Jina and Voyage count a rerank's tokens). */
  tokens: number;
  searchUnits: number;
}

function measure(request: RerankRequest, tokensOf: (text: string) => number): RerankMeasure {
  const query = tokensOf(request.query);
  const documents = request.documents.map(tokensOf);
  return {
    // Whole documents: only Cohere takes `max_tokens_per_doc`; the others count what they were sent.
    tokens: query * documents.length + documents.reduce((sum, tokens) => sum + tokens, 0),
    searchUnits: searchUnitsOf(query, documents, request.maxTokensPerDoc),
  };
}

/** No text has more tokens than characters: the bound the money held is computed with. */
const atMostOneTokenPerCharacter = (text: string): number => text.length;

/**
 * The answer in Cohere v2's shape (`id`, `results` most relevant first with the document's text when asked,
 * `meta.billed_units.search_units`) with Jina's `usage.total_tokens` beside it, whatever upstream answered.
 */
function encodeRerankAnswer(id: string, model: string, request: RerankRequest, response: RerankResponse, billed: RerankMeasure): string {
  return JSON.stringify({
    id,
    model,
    results: response.results.map((result) => ({
      index: result.index,
      relevance_score: result.relevanceScore,
      ...(request.returnDocuments ? { document: { text: request.documents[result.index] } } : {}),
    })),
    meta: { api_version: { version: '2' }, billed_units: { search_units: billed.searchUnits } },
    usage: { total_tokens: billed.tokens },
  });
}

/**
 * `POST /v1/rerank` (and Cohere's own path, `POST /v2/rerank`, for its SDK): a query scored against documents by a
 * `rerank` model on any channel whose upstream reranks, in the metered frame. Billed per search unit (the upstream's
 * count where it reports one, else Cohere's rule over the local token estimate) and per input token (the upstream's
 * `total_tokens`, else the estimate), whichever prices the model has; the money held covers the worst case, every
 * character a token.
 */
export function rerankRoute(services: GatewayServices): RouteHandler {
  const moderate = moderationCheck(services);
  return meteredRoute(services, 'rerank', async (call) => {
    const { context, meter } = call;
    const body = await readJsonObject(context, services.config.maxBodyBytes);
    const parsed = parseRerankRequest(body);
    const { model, routes } = resolveModel(services, meter, parsed.model, { kind: 'rerank', endpoint: `POST ${context.path}` });
    // Input guardrails on the query and every document before anything is held or sent: the upstream gets the masked
    // texts; the documents echoed back (`return_documents`) are the caller's own.
    const texts = [{ text: parsed.query }, ...parsed.documents.map((text) => ({ text }))];
    const guard = await guardCallerTexts(call, moderate, model.id, () => texts);
    const request: RerankRequest = guard === null ? parsed : { ...parsed, query: texts[0]?.text ?? parsed.query, documents: texts.slice(1).map((part) => part.text) };
    const estimate = measure(request, estimateTextTokens);
    const worst = measure(request, atMostOneTokenPerCharacter);
    const { rateLimitHeaders } = await call.admit({ model, estimatedTokens: estimate.tokens, shape: { promptTokens: estimate.tokens }, maxUsage: { tokens: inputTokensOf(worst.tokens), searchUnits: worst.searchUnits } });
    const response = await relayUnary(call.relay, call.sink, call.attempts, routes, {
      // A channel whose upstream serves no rerank is skipped.
      request: (adapter, route, credential) => adapter.rerank?.build(route.channel, credential, request, route.upstreamModel) ?? null,
      parse: (adapter, _route, upstreamBody) => (adapter.rerank as NonNullable<typeof adapter.rerank>).parse(upstreamBody, request),
    }, { model: model.id });
    if (response === null) throw new GatewayError('bad_request', `Model '${model.id}' has no channel that serves rerank.`, { param: 'model' });
    const billed: RerankMeasure = { tokens: response.totalTokens ?? estimate.tokens, searchUnits: response.searchUnits ?? estimate.searchUnits };
    const usage = inputTokensOf(billed.tokens);
    const outcome = { usage, billable: { searchUnits: billed.searchUnits } };
    const price = new AnswerPrice(model);
    const priced = price.priced(encodeRerankAnswer(context.requestId, parsed.model, parsed, response, billed), outcome, 'usage');
    call.sink.send({ status: 200, body: priced.body, contentType: 'application/json', headers: { ...rateLimitHeaders, ...guardHeaders(guard), ...priced.headers } });
    return { status: 200, ...outcome, price };
  });
}
