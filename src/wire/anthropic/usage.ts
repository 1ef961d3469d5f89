import { withHostedTools, type Usage } from '../../ir/usage.js';
import { isJsonObject, type JsonObject } from '../json-object.js';
import { usageOfTopLevelMember } from '../json-top-level.js';
import { tokenCount } from '../token-count.js';
import type { AnthropicUsage } from './anthropic-wire.js';

/**
 * Anthropic's usage → canonical usage. `input_tokens` excludes cached input, so the canonical input total is
 * input + cache read + cache write; `output_tokens_details.thinking_tokens` (when sent) splits the output;
 * `server_tool_use` counts the web searches and web fetches Anthropic ran (each billed per call).
 * Null when the value is not a usage object.
 */
export function usageFromAnthropic(raw: JsonObject): Usage;
export function usageFromAnthropic(raw: unknown): Usage | null;
export function usageFromAnthropic(raw: unknown): Usage | null {
  if (!isJsonObject(raw)) return null;
  const noCache = tokenCount(raw.input_tokens);
  const cacheRead = tokenCount(raw.cache_read_input_tokens);
  const cacheWrite = tokenCount(raw.cache_creation_input_tokens);
  const output = tokenCount(raw.output_tokens);
  const details = isJsonObject(raw.output_tokens_details) ? raw.output_tokens_details : {};
  const reasoning = Math.min(tokenCount(details.thinking_tokens), output);
  const usage: Usage = {
    input: { total: noCache + cacheRead + cacheWrite, noCache, cacheRead, cacheWrite },
    output: { total: output, text: output - reasoning, reasoning },
  };
  const server = raw.server_tool_use;
  if (!isJsonObject(server)) return usage;
  return withHostedTools(usage, { webSearch: tokenCount(server.web_search_requests), webFetch: tokenCount(server.web_fetch_requests), fileSearch: 0 });
}

/** Canonical usage → Anthropic's usage object (`input_tokens` is the uncached part). */
export function usageToAnthropic(usage: Usage): AnthropicUsage {
  const wire: AnthropicUsage = {
    input_tokens: usage.input.noCache,
    cache_creation_input_tokens: usage.input.cacheWrite,
    cache_read_input_tokens: usage.input.cacheRead,
    output_tokens: usage.output.total,
  };
  if (usage.output.reasoning > 0) wire.output_tokens_details = { thinking_tokens: usage.output.reasoning };
  const tools = usage.hostedTools;
  if (tools !== undefined && tools.webSearch + tools.webFetch > 0) wire.server_tool_use = { web_search_requests: tools.webSearch, web_fetch_requests: tools.webFetch };
  return wire;
}

/** Anthropic's usage counters as last reported in a stream (message_delta overwrites what message_start said). */
export type AnthropicUsageCounters = JsonObject;

/** Folds a later usage object into the counters: present values replace earlier ones, absent ones stay. */
export function mergeUsageCounters(into: AnthropicUsageCounters, update: unknown): void {
  if (update === null || typeof update !== 'object') return;
  const object = update as JsonObject;
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (value !== null && value !== undefined) into[key] = value;
  }
}

/** The `usage` of a non-streaming message body; null when absent or the body is not JSON. */
export function findUsageInMessageJson(body: Buffer): Usage | null {
  return usageOfTopLevelMember(body, 'usage', usageFromAnthropic);
}
