import { AnswerPrice } from '../../billing/answer-report.js';
import { GEMINI_BATCH_ENDPOINT, MESSAGE_BATCH_ENDPOINT, type BatchEndpoint } from '../../domain/batches.js';
import type { Usage } from '../../ir/usage.js';
import { findModel } from '../../operations/resolve-model.js';
import { meteredRoute } from '../../operations/metered-frame.js';
import type { RouteHandler } from '../../http/request-context.js';
import type { GatewayServices } from '../../services.js';
import { usageFromAnthropic } from '../../wire/anthropic/usage.js';
import { usageFromGemini } from '../../wire/gemini/usage.js';
import { usageOfChatCompletion, usageFromOpenAI } from '../../wire/openai/usage.js';
import { usageOfResponse } from '../../wire/responses/usage.js';

/** The usage-log label of each endpoint's lines. */
const PROTOCOLS: Record<BatchEndpoint, string> = {
  '/v1/chat/completions': 'openai-chat',
  '/v1/responses': 'openai-responses',
  '/v1/embeddings': 'openai-embeddings',
  '/v1/moderations': 'openai-moderations',
  '/v1/messages': 'anthropic-messages',
  '/v1beta/models/{model}:generateContent': 'gemini',
};

/** The usage a provider's answer to a line reports, in the endpoint's own shape. */
function usageOfAnswer(endpoint: BatchEndpoint, body: unknown): Usage | null {
  if (body === null || typeof body !== 'object') return null;
  const answer = body as Record<string, unknown>;
  switch (endpoint) {
    case '/v1/chat/completions': return usageOfChatCompletion(answer);
    case '/v1/responses': return usageOfResponse(answer);
    case '/v1/embeddings': return usageFromOpenAI(answer.usage);
    case '/v1/moderations': return null;
    case MESSAGE_BATCH_ENDPOINT: return usageFromAnthropic(answer.usage);
    case GEMINI_BATCH_ENDPOINT: return usageFromGemini(answer.usageMetadata);
  }
}

export interface ProviderAnswer {
  endpoint: BatchEndpoint;
  channelId: string;
  /** The public model the line named. */
  model: string;
  status: number;
  body: unknown;
}

/**
 * The route a provider's answer to one line is recorded through: the metered frame of every request (the batch's key
 * and account, a usage row marked with the batch), the answer billed at the model's batch price for the usage the
 * provider reports, settled once by the frame and charged against the batch's hold (which covered the batch's worst
 * case when it was created). Nothing is admitted: the provider ran the line already. An error answer is billed nothing.
 */
export function providerAnswerRoute(services: GatewayServices, answer: ProviderAnswer): RouteHandler {
  return meteredRoute(services, PROTOCOLS[answer.endpoint], async (call) => {
    const model = findModel(services, call.meter, answer.model);
    call.attempts.attempted(answer.channelId);
    const text = JSON.stringify(answer.body);
    const response = call.context.response;
    if (answer.status >= 400) {
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(text);
      return { status: answer.status, errorCode: 'upstream_error' };
    }
    await call.chargeToBatchHold();
    const usage = usageOfAnswer(answer.endpoint, answer.body);
    const price = new AnswerPrice(model);
    const priced = price.priced(text, { usage }, usage === null ? null : 'usage');
    response.writeHead(answer.status, { 'content-type': 'application/json', ...priced.headers });
    response.end(priced.body);
    return { status: answer.status, usage, price };
  });
}
