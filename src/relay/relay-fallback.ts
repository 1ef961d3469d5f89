import { GatewayError } from '../errors/gateway-error.js';
import type { Model } from '../domain/model-records.js';
import type { ChannelRoute } from '../routing/catalog.js';
import type { ChatRelayRequest } from './chat-relay-request.js';
import { relayChat } from './relay-chat.js';
import type { RelayDependencies } from './relay-dependencies.js';
import { UpstreamRefusalError } from './upstream-error.js';
import { AnswerPrice, type AnswerReport } from '../billing/answer-report.js';

/** Response header naming the public id of the model that answered (a fallback model, or the one asked for). */
export const ANSWERING_MODEL_HEADER = 'x-gateway-model';

/** One model of a chat request's fallback chain. */
export interface ModelStep {
  /** The name the chain gives it (the caller's, or the operator's fallback entry); the usage row keeps it. */
  name: string;
  model: Model;
  /**
   * The model's channels able to take this request: known already (the first model's, fitted before admission), or
   * found when the chain reaches the model, which throws or rejects when none can (no channel, context window,
   * capability).
   */
  routes: readonly ChannelRoute[] | (() => readonly ChannelRoute[] | Promise<readonly ChannelRoute[]>);
}

/** Codes of the errors after which the next model of the chain is tried: its channels failed or were over their limits, or the request is over its context window. */
const FALLBACK_CODES: ReadonlySet<string> = new Set(['upstream_error', 'upstream_unavailable', 'rate_limit_exceeded', 'context_length_exceeded']);

/**
 * Whether a model's failure lets the next model try: every channel failed, none was available, the request is
 * longer than its context window, or its upstream refused the request on content policy or context length. The
 * caller's other mistakes (a malformed request, a refused key) would fail on any model and are answered as they are.
 */
export function fallsBack(error: unknown): boolean {
  if (error instanceof UpstreamRefusalError) return error.reason !== null;
  return error instanceof GatewayError && FALLBACK_CODES.has(error.code);
}

/**
 * Relays a chat request to the models of its chain in order until one answers. The next model is tried only
 * while nothing reached the caller; each model's answer is billed at its own price (its report's price) and names
 * it (the model field, the x-gateway-model header). A fallback model whose routes cannot take the request is
 * passed over. When no model answers, the last answer-worthy failure is the caller's error. A chain of one model
 * whose routes are known is relayed at once: the loop would do the same and rethrow whatever it failed with.
 */
export function relayModelChain(dependencies: RelayDependencies, request: Omit<ChatRelayRequest, 'price'>, steps: readonly ModelStep[]): Promise<AnswerReport> {
  const first = steps[0];
  if (first === undefined || steps.length > 1 || typeof first.routes === 'function') return relayEachModel(dependencies, request, steps);
  request.attempts.named(first.name);
  return relayStep(dependencies, request, first, true, first.routes);
}

/** One model's try at the answer, on its routes; `asked`: the model the request names, not a fallback. */
function relayStep(dependencies: RelayDependencies, request: Omit<ChatRelayRequest, 'price'>, step: ModelStep, asked: boolean, routes: readonly ChannelRoute[]): Promise<AnswerReport> {
  const price = new AnswerPrice(step.model);
  // Nothing reached the caller before this step, so its header replaces the previous step's.
  request.responseHeaders[ANSWERING_MODEL_HEADER] = step.model.id;
  // The cache's key names the model asked for: only that model's own answer is stored under it.
  return relayChat(dependencies, asked ? { ...request, price } : { ...request, price, answeringModel: step.model.id, capture: null }, routes);
}

/** The chain model by model, each tried once its routes are found, until one answers or none is left. */
async function relayEachModel(dependencies: RelayDependencies, request: Omit<ChatRelayRequest, 'price'>, steps: readonly ModelStep[]): Promise<AnswerReport> {
  const { attempts } = request;
  let failure: unknown = null;
  for (let index = 0; index < steps.length; index += 1) {
    const step = steps[index] as ModelStep;
    const last = index === steps.length - 1;
    attempts.named(step.name);
    let routes: readonly ChannelRoute[];
    try {
      routes = typeof step.routes === 'function' ? await step.routes() : step.routes;
    } catch (error) {
      // The model the caller named answers for itself; a fallback that cannot take the request is passed over.
      if (index === 0 && !fallsBack(error)) throw error;
      if (index === 0 || fallsBack(error)) failure = error;
      if (last) throw failure ?? error;
      continue;
    }
    try {
      return await relayStep(dependencies, request, step, index === 0, routes);
    } catch (error) {
      if (last || !fallsBack(error)) throw error;
      failure = error;
    }
  }
  throw failure ?? new Error('a model chain has at least one model');
}
