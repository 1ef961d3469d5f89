import type { OpeningEvent } from '../client-codec.js';
import { CostingObserver } from '../answer-cost.js';
import type { AnswerFacts } from '../../ir/answer-facts.js';
import { withHostedTools, type HostedToolCalls, type Usage } from '../../ir/usage.js';
import { mergeUsageCounters, usageFromAnthropic } from '../../wire/anthropic/usage.js';
import { isJsonObject } from '../../wire/json-object.js';
import { eventJsonObject } from '../../wire/sse-event-splitter.js';

const MESSAGE_START = Buffer.from('message_start');
const MESSAGE_DELTA = Buffer.from('message_delta');
const MESSAGE_STOP = Buffer.from('message_stop');
const CONTENT_DELTA = Buffer.from('content_block_delta');
const CONTENT_START = Buffer.from('content_block_start');
const PING = Buffer.from('ping');
const SERVER_TOOL_USE = Buffer.from('"server_tool_use"');
const ERROR = Buffer.from('error');
/** The event name (or the data's leading `type`) sits in an event's first bytes. */
const HEAD_BYTES = 64;
/** Events up to this long are searched whole for a name in their head; longer ones only in a view of the head. */
const SEARCHED_WHOLE_BYTES = 1024;

/**
 * Whether `needle` stands within the event's first `HEAD_BYTES` bytes: where its first occurrence ends, so an event
 * short enough to search whole needs no view of its head.
 */
function inHead(event: Buffer, needle: Buffer): boolean {
  if (event.length > SEARCHED_WHOLE_BYTES) return event.subarray(0, HEAD_BYTES).includes(needle);
  const at = event.indexOf(needle);
  return at >= 0 && at + needle.length <= HEAD_BYTES;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Anthropic's error types → the status they stand for (overloaded 529 is treated as 503). */
const ERROR_STATUS: Record<string, number> = {
  overloaded_error: 503,
  api_error: 502,
  rate_limit_error: 429,
  timeout_error: 504,
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
};

/**
 * Watches an Anthropic Messages SSE stream on the pass-through path. Only `message_start` (input and cache
 * counters) and `message_delta` (cumulative output, and input counters when the upstream repeats them) are parsed;
 * content events are kept by reference and their text read only when the stream is cut before message_delta.
 * Every event is forwarded.
 */
export class AnthropicStreamUsageObserver extends CostingObserver {
  #raw: Record<string, unknown> | null = null;
  /** Content events not read yet (see `takeDeliveredText`). */
  #content: Buffer[] = [];
  /** content_block_start events of server tools (by reference), counted only if the stream ends before message_delta. */
  readonly #serverToolStarts: Buffer[] = [];
  #sawMessageDelta = false;
  #completed = false;
  #model: string | null = null;
  #stopReason: string | null = null;

  completed(): boolean {
    return this.#completed;
  }

  observe(event: Buffer): boolean {
    if (inHead(event, MESSAGE_STOP)) this.#completed = true;
    const contentStart = inHead(event, CONTENT_START);
    if (contentStart || inHead(event, CONTENT_DELTA)) {
      this.#content.push(event);
      if (contentStart && event.includes(SERVER_TOOL_USE)) this.#serverToolStarts.push(event);
    } else if (inHead(event, MESSAGE_START)) {
      const message = eventJsonObject(event)?.message;
      if (isJsonObject(message) && typeof message.model === 'string') this.#model = message.model;
      // The parsed event is this observer's own: its usage object is kept as parsed, and merged into in place.
      if (isJsonObject(message) && isJsonObject(message.usage)) this.#raw = message.usage;
    } else if (inHead(event, MESSAGE_DELTA)) {
      const body = eventJsonObject(event);
      if (isJsonObject(body?.delta) && typeof body.delta.stop_reason === 'string') this.#stopReason = body.delta.stop_reason;
      const usage = body?.usage;
      if (isJsonObject(usage)) {
        this.#sawMessageDelta = true;
        if (this.#raw === null) this.#raw = {};
        mergeUsageCounters(this.#raw, usage);
      }
    }
    return true;
  }

  opening(event: Buffer): OpeningEvent {
    if (inHead(event, MESSAGE_START) || inHead(event, PING)) return { kind: 'preamble' };
    if (inHead(event, ERROR)) {
      const body = eventJsonObject(event);
      if (body?.type === 'error') {
        const type = isJsonObject(body.error) ? text(body.error.type) : '';
        return { kind: 'error', status: ERROR_STATUS[type] ?? 502 };
      }
    }
    return { kind: 'content' };
  }

  reportedUsage(): Usage | null {
    const usage = usageFromAnthropic(this.#raw);
    // Before message_delta counts them, the server tools already run are the server_tool_use blocks streamed.
    return usage === null || this.#sawMessageDelta ? usage : withHostedTools(usage, this.#serverToolsStreamed());
  }

  #serverToolsStreamed(): HostedToolCalls | undefined {
    const calls: HostedToolCalls = { webSearch: 0, webFetch: 0, fileSearch: 0 };
    for (const event of this.#serverToolStarts) {
      const block = eventJsonObject(event)?.content_block;
      if (!isJsonObject(block) || block.type !== 'server_tool_use') continue;
      if (block.name === 'web_search') calls.webSearch += 1;
      else if (block.name === 'web_fetch') calls.webFetch += 1;
    }
    return calls;
  }

  usageIsFinal(): boolean {
    return this.#sawMessageDelta;
  }

  answerFacts(): AnswerFacts {
    return { model: this.#model, finishReasons: this.#stopReason === null ? [] : [this.#stopReason] };
  }

  takeDeliveredText(): Iterable<string> {
    const events = this.#content;
    this.#content = [];
    return deliveredTexts(events);
  }
}

function* deliveredTexts(events: readonly Buffer[]): Generator<string> {
  for (const event of events) {
    const body = eventJsonObject(event);
    if (body === null) continue;
    if (isJsonObject(body.delta)) yield text(body.delta.text) + text(body.delta.thinking) + text(body.delta.partial_json);
    else if (isJsonObject(body.content_block)) yield text(body.content_block.text) + text(body.content_block.name);
  }
}
