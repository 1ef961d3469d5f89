import { GatewayError } from '../../errors/gateway-error.js';
import type { ChatResponse } from '../../ir/chat-response.js';
import type { ContentPart } from '../../ir/message.js';
import { finishReasonFromAnthropic } from '../../wire/anthropic/stop-reason.js';
import { citationsOf, webSearchQuery, webSearchResult } from './web-search-blocks.js';
import { usageFromAnthropic } from '../../wire/anthropic/usage.js';
import { isJsonObject } from '../../wire/json-object.js';

export function malformedUpstreamBody(): GatewayError {
  return new GatewayError('upstream_error', 'The upstream provider answered with a malformed body.');
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** One response content block → a canonical part; server-tool blocks and newer types are reported and skipped. */
function parseBlock(block: Record<string, unknown>, warnings: string[], queries: Map<string, string>): ContentPart | null {
  switch (block.type) {
    case 'text': {
      const citations = citationsOf(block.citations);
      return citations.length > 0 ? { type: 'text', text: text(block.text), citations } : { type: 'text', text: text(block.text) };
    }
    case 'server_tool_use': {
      const query = webSearchQuery(block);
      if (query === null) break;
      queries.set(text(block.id), query);
      return null;
    }
    case 'web_search_tool_result': {
      const search = webSearchResult(block, queries);
      queries.delete(search.id);
      return search;
    }
    case 'thinking': {
      const signature = text(block.signature);
      return signature === '' ? { type: 'reasoning', text: text(block.thinking) } : { type: 'reasoning', text: text(block.thinking), signature };
    }
    case 'redacted_thinking':
      return { type: 'reasoning', text: '', redactedData: text(block.data) };
    case 'tool_use':
      return { type: 'tool-call', id: text(block.id), name: text(block.name), argumentsJson: JSON.stringify(isJsonObject(block.input) ? block.input : {}) };
    default:
      break;
  }
  const warning = `Anthropic '${String(block.type)}' blocks are not carried on the translated path.`;
  if (!warnings.includes(warning)) warnings.push(warning);
  return null;
}

/** A 2xx Anthropic `message` body → the canonical response. */
export function parseAnthropicResponse(body: Buffer): ChatResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new GatewayError('upstream_error', 'The upstream provider answered with a malformed body.', { cause: error });
  }
  if (!isJsonObject(parsed) || !Array.isArray(parsed.content)) throw malformedUpstreamBody();
  const warnings: string[] = [];
  const content: ContentPart[] = [];
  const queries = new Map<string, string>();
  for (const block of parsed.content) {
    if (!isJsonObject(block)) continue;
    const part = parseBlock(block, warnings, queries);
    if (part !== null) content.push(part);
  }
  // A search whose results the message does not hold (the turn paused) carries nothing to translate.
  if (queries.size > 0) warnings.push("Anthropic 'server_tool_use' blocks are not carried on the translated path.");
  return {
    id: text(parsed.id),
    model: text(parsed.model),
    created: Math.floor(Date.now() / 1000),
    content,
    finishReason: finishReasonFromAnthropic(parsed.stop_reason),
    usage: usageFromAnthropic(isJsonObject(parsed.usage) ? parsed.usage : {}),
    warnings,
  };
}
