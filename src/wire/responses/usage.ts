import { withHostedTools, type HostedToolCalls, type Usage } from '../../ir/usage.js';
import { isJsonObject } from '../json-object.js';
import { usageOfTopLevelMember } from '../json-top-level.js';
import { tokenCount } from '../token-count.js';

/** The Responses API usage object (`response.usage`). */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** Canonical usage → Responses usage. Cached tokens are part of input_tokens, reasoning tokens of output_tokens. */
export function encodeResponsesUsage(usage: Usage): ResponsesUsage {
  const inputDetails: ResponsesUsage['input_tokens_details'] = { cached_tokens: usage.input.cacheRead };
  // Cache writes exist upstream (Anthropic); sent only when there were any, as on the chat-completions wire.
  if (usage.input.cacheWrite > 0) inputDetails.cache_write_tokens = usage.input.cacheWrite;
  return {
    input_tokens: usage.input.total,
    input_tokens_details: inputDetails,
    output_tokens: usage.output.total,
    output_tokens_details: { reasoning_tokens: usage.output.reasoning },
    total_tokens: usage.input.total + usage.output.total,
  };
}

/** Responses usage (from an upstream answer or event) → canonical usage; null when absent. */
export function usageFromResponses(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const usage = raw as Record<string, unknown>;
  const input = tokenCount(usage.input_tokens);
  const output = tokenCount(usage.output_tokens);
  const inputDetails = (usage.input_tokens_details ?? {}) as Record<string, unknown>;
  const outputDetails = (usage.output_tokens_details ?? {}) as Record<string, unknown>;
  const cacheRead = Math.min(tokenCount(inputDetails.cached_tokens), input);
  const cacheWrite = Math.min(tokenCount(inputDetails.cache_write_tokens), input - cacheRead);
  const reasoning = Math.min(tokenCount(outputDetails.reasoning_tokens), output);
  return {
    input: { total: input, noCache: input - cacheRead - cacheWrite, cacheRead, cacheWrite },
    output: { total: output, text: output - reasoning, reasoning },
  };
}

/**
 * The calls of OpenAI's hosted tools an answer's `output` holds, each billed per call: `web_search_call` items whose
 * action searched (opening a page or finding in it is not a search; items without an action are searches) and
 * `file_search_call` items. Undefined when there are none.
 */
export function hostedToolCallsOfOutput(output: unknown): HostedToolCalls | undefined {
  if (!Array.isArray(output)) return undefined;
  const calls: HostedToolCalls = { webSearch: 0, webFetch: 0, fileSearch: 0 };
  for (const item of output) {
    if (!isJsonObject(item)) continue;
    if (item.type === 'web_search_call' && (!isJsonObject(item.action) || item.action.type === 'search')) calls.webSearch += 1;
    else if (item.type === 'file_search_call') calls.fileSearch += 1;
  }
  return calls.webSearch + calls.fileSearch > 0 ? calls : undefined;
}

/** The usage of a whole Responses answer object: its `usage` and the hosted tool calls of its `output`. */
export function usageOfResponse(response: { usage?: unknown; output?: unknown } | null): Usage | null {
  const usage = usageFromResponses(response?.usage);
  return usage === null ? null : withHostedTools(usage, hostedToolCallsOfOutput(response?.output));
}

/** Only a body that names one of these items is parsed whole for its hosted tool calls. */
const HOSTED_TOOL_ITEMS = [Buffer.from('"web_search_call"'), Buffer.from('"file_search_call"')];

/**
 * The top-level `usage` of a Responses JSON body (pass-through, non-streaming), with the hosted tool calls of its
 * output; null when absent or not JSON. The body is parsed whole only when it holds a hosted tool call.
 */
export function findResponsesUsageInJson(body: Buffer): Usage | null {
  const usage = usageOfTopLevelMember(body, 'usage', usageFromResponses);
  if (usage === null || !HOSTED_TOOL_ITEMS.some((marker) => body.includes(marker))) return usage;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return isJsonObject(parsed) ? withHostedTools(usage, hostedToolCallsOfOutput(parsed.output)) : usage;
  } catch {
    return usage;
  }
}
