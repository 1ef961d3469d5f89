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
    const head = event.subarray(0, HEAD_BYTES);
    if (head.includes(MESSAGE_STOP)) this.#completed = true;
    if (head.includes(CONTENT_DELTA) || head.includes(CONTENT_START)) {
      this.#content.push(event);
      if (head.includes(CONTENT_START) && event.includes(SERVER_TOOL_USE)) this.#serverToolStarts.push(event);
    } else if (head.includes(MESSAGE_START)) {
      const message = eventJsonObject(event)?.message;
      if (isJsonObject(message) && typeof message.model === 'string') this.#model = message.model;
      if (isJsonObject(message) && isJsonObject(message.usage)) this.#raw = { ...message.usage };
    } else if (head.includes(MESSAGE_DELTA)) {
      const body = eventJsonObject(event);
      if (isJsonObject(body?.delta) && typeof body.delta.stop_reason === 'string') this.#stopReason = body.delta.stop_reason;
      const usage = body?.usage;
      if (isJsonObject(usage)) {
        this.#sawMessageDelta = true;
        const merged: Record<string, unknown> = { ...(this.#raw ?? {}) };
        mergeUsageCounters(merged, usage);
        this.#raw = merged;
      }
    }
    return true;
  }

  opening(event: Buffer): OpeningEvent {
    const head = event.subarray(0, HEAD_BYTES);
    if (head.includes(MESSAGE_START) || head.includes(PING)) return { kind: 'preamble' };
    if (head.includes(ERROR)) {
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
