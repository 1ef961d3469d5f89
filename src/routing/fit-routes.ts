import { GatewayError } from '../errors/gateway-error.js';
import type { RequestNeeds } from '../ir/request-needs.js';
import type { ChannelRoute, RouteFacts } from './catalog.js';

/** Tokens an image or file part may cost at most as the local count measures it (its bytes in the body aside). */
const MEDIA_PART_TOKENS = 1000;
/**
 * Below this share of the window by the cheap estimate (about four characters a token), the prompt is not counted:
 * ordinary text would need well under three characters a token to overflow, and for text that does (CJK, say) the
 * upstream still refuses on its own. Above it the tokenizer decides, so nothing is refused on a guess.
 */
const NEAR_LIMIT_SHARE = 0.8;

/** What a chat request asks of the model, as routing checks it before any upstream call. */
export interface RouteDemand {
  needs: RequestNeeds;
  /** Size of the request body in bytes: no tokenizer makes more tokens of text than it has bytes. */
  bodyBytes: number;
  /** The cheap estimate of the prompt's tokens (characters / 4 plus framing) the endpoint already made. */
  estimatedPromptTokens: number;
  /** Output tokens the caller asked for (max_tokens), 0 when it named none. */
  outputTokens: number;
  /** The prompt's exact token count, asked for only when the cheap bound does not already fit. */
  countPromptTokens: () => Promise<number>;
}

const CAPABILITY_NAMES = { tools: 'tools (function calling)', vision: 'image input', jsonSchema: 'JSON schema output' } as const;

function missing(facts: RouteFacts | undefined, needs: RequestNeeds): Array<keyof typeof CAPABILITY_NAMES> {
  const capabilities = facts?.capabilities;
  if (capabilities === null || capabilities === undefined) return [];
  const lacking: Array<keyof typeof CAPABILITY_NAMES> = [];
  if (needs.tools && !capabilities.tools) lacking.push('tools');
  if (needs.vision && !capabilities.vision) lacking.push('vision');
  if (needs.jsonSchema && !capabilities.jsonSchema) lacking.push('jsonSchema');
  return lacking;
}

/**
 * The routes able to take the request: those whose model offers what it needs (tools, images, JSON schema) and
 * whose context window holds its prompt plus the output asked for. Unknown facts never refuse. When none is left,
 * a 400 that says why, before any upstream call. The tokenizer runs only near the limit: not when the body's byte
 * size (an upper bound of its tokens) fits the smallest window, nor when the cheap estimate is well inside it.
 * The routes are returned at once; only when the tokenizer must count is the answer a promise of them.
 */
export function fitRoutes(modelName: string, routes: readonly ChannelRoute[], demand: RouteDemand): readonly ChannelRoute[] | Promise<readonly ChannelRoute[]> {
  let capable = routes;
  const { needs } = demand;
  if (needs.tools || needs.vision || needs.jsonSchema) {
    capable = routes.filter((route) => missing(route.facts, needs).length === 0);
    if (capable.length === 0 && routes.length > 0) {
      const lacking = missing(routes[0]?.facts, needs).map((name) => CAPABILITY_NAMES[name]);
      throw new GatewayError('model_capability_unsupported', `Model '${modelName}' does not support ${lacking.join(', ')}; choose a model that does (GET /v1/models lists each model's capabilities).`, { param: 'model' });
    }
  }
  const windows = capable.map((route) => route.facts?.contextWindow ?? null);
  if (windows.length === 0 || windows.some((window) => window === null)) return capable;
  const smallest = Math.min(...(windows as number[]));
  const bound = demand.bodyBytes + needs.mediaParts * MEDIA_PART_TOKENS + demand.outputTokens;
  if (bound <= smallest) return capable;
  if (demand.estimatedPromptTokens + demand.outputTokens <= smallest * NEAR_LIMIT_SHARE) return capable;
  return demand.countPromptTokens().then((promptTokens) => fitCounted(modelName, capable, windows as number[], promptTokens, demand.outputTokens));
}

/** The routes whose window holds the counted prompt plus the output asked for, or the 400 when none does. */
function fitCounted(modelName: string, capable: readonly ChannelRoute[], windows: readonly number[], promptTokens: number, outputTokens: number): readonly ChannelRoute[] {
  const needed = promptTokens + outputTokens;
  const fitting = capable.filter((route) => needed <= (route.facts?.contextWindow as number));
  if (fitting.length === 0) {
    const largest = Math.max(...windows);
    const asked = outputTokens > 0 ? ` (${promptTokens} in the prompt plus ${outputTokens} of output asked for)` : '';
    throw new GatewayError('context_length_exceeded', `This request needs ${needed} tokens${asked}, more than model '${modelName}' can take (${largest} tokens of context). Shorten the messages or ask for less output.`, { param: 'messages' });
  }
  return fitting;
}
