import type { FinishReason } from '../../ir/finish-reason.js';
import type { StreamPart } from '../../ir/stream-part.js';
import { finishReasonFromAnthropic } from '../../wire/anthropic/stop-reason.js';
import { mergeUsageCounters, usageFromAnthropic, type AnthropicUsageCounters } from '../../wire/anthropic/usage.js';
import { readSseMessageBatches } from '../../wire/sse-event-splitter.js';
import { citationOf, citationsOf, webSearchQuery, webSearchResult } from './web-search-blocks.js';
import { isJsonObject } from '../../wire/json-object.js';
import { unreachable } from '../../shared/unreachable.js';

type OpenBlock =
  | { kind: 'text'; id: string }
  | { kind: 'reasoning'; id: string; signature: string; redactedData?: string }
  | { kind: 'tool'; id: string; sawInput: boolean }
  /** The web search tool's server_tool_use: its input (the query) is collected until the block stops. */
  | { kind: 'search'; toolUseId: string; input: string }
  /** Server-tool blocks and newer types: not carried. */
  | { kind: 'skipped' };

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** An Anthropic `error` event's type → the status and gateway code of the canonical error part. */
function streamError(error: unknown): Extract<StreamPart, { type: 'error' }> {
  const body = isJsonObject(error) && isJsonObject(error.error) ? error.error : {};
  const type = text(body.type) || 'api_error';
  const message = text(body.message) || 'The upstream provider failed mid-stream.';
  if (type === 'overloaded_error') return { type: 'error', status: 503, code: 'upstream_unavailable', message: `Upstream overloaded: ${message}` };
  return { type: 'error', status: 502, code: 'upstream_error', message: `Upstream ${type}: ${message}` };
}

/**
 * Anthropic's SSE stream → canonical parts: response-start (message_start), usage whenever the upstream reports
 * it (message_start, message_delta; running totals), one block life cycle per content block (ids are the block
 * indexes), finish at message_stop. An `error` event, or a stream that ends before message_stop, gives an
 * `error` part instead of the finish.
 */
export async function* parseAnthropicStream(body: AsyncIterable<Buffer>): AsyncIterable<StreamPart> {
  const blocks = new Map<number, OpenBlock>();
  const queries = new Map<string, string>();
  const counters: AnthropicUsageCounters = {};
  let sawUsage = false;
  let started = false;
  let toolIndex = 0;
  let finishReason: FinishReason = { unified: 'other', raw: null };

  for await (const batch of readSseMessageBatches(body)) {
    for (const message of batch) {
      if (message.data === '') continue;
      let event: Record<string, unknown>;
      try {
        const parsed = JSON.parse(message.data) as unknown;
        if (!isJsonObject(parsed)) continue;
        event = parsed;
      } catch {
        yield { type: 'error', status: 502, code: 'upstream_error', message: 'The upstream provider sent a malformed stream event.' };
        return;
      }
      const type = message.event ?? text(event.type);
      switch (type) {
        case 'message_start': {
          if (started) break;
          started = true;
          const start = isJsonObject(event.message) ? event.message : {};
          yield { type: 'response-start', id: text(start.id), model: text(start.model), created: Math.floor(Date.now() / 1000) };
          if (isJsonObject(start.usage)) {
            mergeUsageCounters(counters, start.usage);
            sawUsage = true;
            yield { type: 'usage', usage: usageFromAnthropic(counters) };
          }
          break;
        }
        case 'content_block_start': {
          const index = typeof event.index === 'number' ? event.index : blocks.size;
          const block = isJsonObject(event.content_block) ? event.content_block : {};
          yield* startBlock(blocks, index, block, () => toolIndex++, queries);
          break;
        }
        case 'content_block_delta': {
          const open = blocks.get(typeof event.index === 'number' ? event.index : -1);
          const delta = isJsonObject(event.delta) ? event.delta : {};
          if (open !== undefined) yield* applyDelta(open, delta);
          break;
        }
        case 'content_block_stop': {
          const index = typeof event.index === 'number' ? event.index : -1;
          const open = blocks.get(index);
          blocks.delete(index);
          if (open !== undefined) yield* stopBlock(open, queries);
          break;
        }
        case 'message_delta': {
          const delta = isJsonObject(event.delta) ? event.delta : {};
          if (delta.stop_reason !== undefined && delta.stop_reason !== null) finishReason = finishReasonFromAnthropic(delta.stop_reason);
          if (isJsonObject(event.usage)) {
            mergeUsageCounters(counters, event.usage);
            sawUsage = true;
            yield { type: 'usage', usage: usageFromAnthropic(counters) };
          }
          break;
        }
        case 'message_stop':
          for (const open of blocks.values()) yield* stopBlock(open, queries);
          blocks.clear();
          yield { type: 'finish', reason: finishReason, usage: sawUsage ? usageFromAnthropic(counters) : null };
          return;
        case 'error':
          yield streamError(event);
          return;
        default:
          // ping, and event types Anthropic may add
          break;
      }
    }
  }
  yield { type: 'error', status: 502, code: 'upstream_error', message: 'The upstream stream ended before the message was complete.' };
}

function* startBlock(blocks: Map<number, OpenBlock>, index: number, block: Record<string, unknown>, nextToolIndex: () => number, queries: Map<string, string>): Generator<StreamPart> {
  const id = String(index);
  switch (block.type) {
    case 'text': {
      blocks.set(index, { kind: 'text', id });
      yield { type: 'text-start', id };
      for (const citation of citationsOf(block.citations)) yield { type: 'text-citation', id, citation };
      if (text(block.text) !== '') yield { type: 'text-delta', id, delta: text(block.text) };
      return;
    }
    case 'server_tool_use': {
      const query = webSearchQuery(block);
      if (query === null) blocks.set(index, { kind: 'skipped' });
      else blocks.set(index, { kind: 'search', toolUseId: text(block.id), input: query === '' ? '' : JSON.stringify({ query }) });
      return;
    }
    case 'web_search_tool_result': {
      blocks.set(index, { kind: 'skipped' });
      const search = webSearchResult(block, queries);
      yield search.query === undefined ? { type: 'web-search', id: search.id, sources: search.sources } : { type: 'web-search', id: search.id, query: search.query, sources: search.sources };
      return;
    }
    case 'thinking': {
      blocks.set(index, { kind: 'reasoning', id, signature: text(block.signature) });
      yield { type: 'reasoning-start', id };
      if (text(block.thinking) !== '') yield { type: 'reasoning-delta', id, delta: text(block.thinking) };
      return;
    }
    case 'redacted_thinking':
      blocks.set(index, { kind: 'reasoning', id, signature: '', redactedData: text(block.data) });
      yield { type: 'reasoning-start', id };
      return;
    case 'tool_use': {
      const open: OpenBlock = { kind: 'tool', id, sawInput: false };
      blocks.set(index, open);
      yield { type: 'tool-input-start', id, toolCallId: text(block.id), toolName: text(block.name), index: nextToolIndex() };
      if (isJsonObject(block.input) && Object.keys(block.input).length > 0) {
        open.sawInput = true;
        yield { type: 'tool-input-delta', id, delta: JSON.stringify(block.input) };
      }
      return;
    }
    default:
      blocks.set(index, { kind: 'skipped' });
  }
}

function* applyDelta(open: OpenBlock, delta: Record<string, unknown>): Generator<StreamPart> {
  switch (open.kind) {
    case 'text':
      if (delta.type === 'text_delta' && text(delta.text) !== '') yield { type: 'text-delta', id: open.id, delta: text(delta.text) };
      else if (delta.type === 'citations_delta') {
        const citation = citationOf(delta.citation);
        if (citation !== null) yield { type: 'text-citation', id: open.id, citation };
      }
      return;
    case 'search':
      if (delta.type === 'input_json_delta') open.input += text(delta.partial_json);
      return;
    case 'reasoning':
      if (delta.type === 'thinking_delta' && text(delta.thinking) !== '') yield { type: 'reasoning-delta', id: open.id, delta: text(delta.thinking) };
      else if (delta.type === 'signature_delta') open.signature = text(delta.signature);
      return;
    case 'tool':
      if (delta.type === 'input_json_delta' && text(delta.partial_json) !== '') {
        open.sawInput = true;
        yield { type: 'tool-input-delta', id: open.id, delta: text(delta.partial_json) };
      }
      return;
    case 'skipped':
      return;
    default:
      return unreachable(open, 'block');
  }
}

function searchQuery(input: string): string {
  try {
    const parsed = JSON.parse(input) as unknown;
    return isJsonObject(parsed) && typeof parsed.query === 'string' ? parsed.query : '';
  } catch {
    return '';
  }
}

function* stopBlock(open: OpenBlock, queries: Map<string, string>): Generator<StreamPart> {
  switch (open.kind) {
    case 'text':
      yield { type: 'text-end', id: open.id };
      return;
    case 'reasoning': {
      const end: Extract<StreamPart, { type: 'reasoning-end' }> = { type: 'reasoning-end', id: open.id };
      if (open.signature !== '') end.signature = open.signature;
      if (open.redactedData !== undefined) end.redactedData = open.redactedData;
      yield end;
      return;
    }
    case 'tool':
      // A tool without arguments streams no JSON; canonical arguments are always a JSON text.
      if (!open.sawInput) yield { type: 'tool-input-delta', id: open.id, delta: '{}' };
      yield { type: 'tool-input-end', id: open.id };
      return;
    case 'search':
      queries.set(open.toolUseId, searchQuery(open.input));
      return;
    case 'skipped':
      return;
    default:
      return unreachable(open, 'block');
  }
}
