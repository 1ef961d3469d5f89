import type { AnswerFacts } from '../../ir/answer-facts.js';
import { emptyUsage, withHostedTools, type Usage } from '../../ir/usage.js';
import { responsesAnswerFacts } from '../../wire/responses/answer-facts.js';
import type { OpeningEvent } from '../client-codec.js';
import { CostingObserver } from '../answer-cost.js';
import { eventJsonObject } from '../../wire/sse-event-splitter.js';
import { hostedToolCallsOfOutput, usageOfResponse } from '../../wire/responses/usage.js';

/** The event type sits in the first bytes: `event: <type>` or `{"type":"<type>"`; only those bytes are searched. */
const HEAD_BYTES = 96;
const COMPLETED = ['response.completed', 'response.incomplete'].map((type) => Buffer.from(type));
const FAILED = Buffer.from('response.failed');
const ERROR_EVENTS = [Buffer.from('event: error'), Buffer.from('"type":"error"')];
const DELTA = Buffer.from('.delta');
const ITEM_ADDED = Buffer.from('response.output_item.added');
const ITEM_DONE = Buffer.from('response.output_item.done');
const HOSTED_TOOL_ITEMS = [Buffer.from('"web_search_call"'), Buffer.from('"file_search_call"')];
const PREAMBLE = ['response.created', 'response.in_progress', 'response.queued'].map((type) => Buffer.from(type));

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The status an in-band Responses error stands for: rate limits 429, the caller's own errors 400, the rest 502. */
function errorStatus(error: { code?: unknown; type?: unknown }): number {
  const label = `${text(error.type)} ${text(error.code)}`;
  if (/rate_limit|insufficient_quota/.test(label)) return 429;
  if (/invalid_request|invalid_prompt|context_length|content_filter/.test(label)) return 400;
  return 502;
}

/**
 * Watches an OpenAI Responses SSE stream on the pass-through path: reads usage from the terminal event
 * (response.completed / response.incomplete / response.failed), notices in-band failures, and keeps the delta events
 * by reference so a stream cut before its end can be billed for the text it delivered. Only terminal and error
 * events are parsed while streaming. Every event is forwarded untouched.
 */
export class ResponsesPassThroughObserver extends CostingObserver {
  #events = 0;
  /** Answer events not read yet (see `takeDeliveredText`). */
  #answerEvents: Buffer[] = [];
  #usage: Usage | null = null;
  /** Hosted tool items done so far (by reference), counted only if the stream ends before its usage. */
  readonly #hostedToolItems: Buffer[] = [];
  #final = false;
  #completed = false;
  #failure: { code: string; message: string } | null = null;
  #facts: AnswerFacts = { model: null, finishReasons: [] };

  observe(event: Buffer): boolean {
    this.#events += 1;
    const head = event.subarray(0, HEAD_BYTES);
    if (head.includes(DELTA) || head.includes(ITEM_ADDED)) {
      this.#answerEvents.push(event);
      return true;
    }
    if (head.includes(ITEM_DONE) && HOSTED_TOOL_ITEMS.some((marker) => event.includes(marker))) this.#hostedToolItems.push(event);
    const completed = COMPLETED.some((type) => head.includes(type));
    if (completed || head.includes(FAILED)) {
      this.#completed = true;
      const response = (eventJsonObject(event)?.response ?? null) as { usage?: unknown; output?: unknown; error?: unknown } | null;
      this.#facts = responsesAnswerFacts(response);
      const usage = usageOfResponse(response);
      if (usage !== null) {
        this.#usage = usage;
        this.#final = true;
      }
      if (!completed) this.#failure = failureOf(response?.error);
    } else if (ERROR_EVENTS.some((marker) => head.includes(marker))) {
      const parsed = eventJsonObject(event);
      this.#failure = failureOf(parsed?.error ?? parsed);
    }
    return true;
  }

  opening(event: Buffer): OpeningEvent {
    const head = event.subarray(0, HEAD_BYTES);
    if (PREAMBLE.some((type) => head.includes(type))) return { kind: 'preamble' };
    if (head.includes(FAILED)) {
      const response = (eventJsonObject(event)?.response ?? null) as { error?: { code?: unknown; type?: unknown } | null } | null;
      return { kind: 'error', status: errorStatus(response?.error ?? {}) };
    }
    if (ERROR_EVENTS.some((marker) => head.includes(marker))) {
      const parsed = eventJsonObject(event);
      return { kind: 'error', status: errorStatus((parsed?.error ?? parsed ?? {}) as { code?: unknown; type?: unknown }) };
    }
    return { kind: 'content' };
  }

  completed(): boolean {
    return this.#completed;
  }

  reportedUsage(): Usage | null {
    if (this.#usage !== null || this.#hostedToolItems.length === 0) return this.#usage;
    // Cut before the terminal event: the searches done are billed (the tokens are counted from what was delivered).
    const items = this.#hostedToolItems.map((event) => eventJsonObject(event)?.item);
    return withHostedTools(emptyUsage(), hostedToolCallsOfOutput(items));
  }

  usageIsFinal(): boolean {
    return this.#final;
  }

  answerFacts(): AnswerFacts {
    return this.#facts;
  }

  /** Text, reasoning summaries, refusals, function names and argument text delivered since the last call. */
  takeDeliveredText(): Iterable<string> {
    const events = this.#answerEvents;
    this.#answerEvents = [];
    return deliveredTexts(events);
  }

  /** The upstream's in-band failure (response.failed or an error event), or null. */
  failure(): { code: string; message: string } | null {
    return this.#failure;
  }

  /** Events seen so far: OpenAI numbers them from 0, so this is the next event's sequence_number. */
  nextSequenceNumber(): number {
    return this.#events;
  }
}

function failureOf(raw: unknown): { code: string; message: string } {
  const error = (raw ?? {}) as { code?: unknown; message?: unknown };
  return { code: typeof error.code === 'string' ? error.code : 'upstream_error', message: typeof error.message === 'string' ? error.message : 'The upstream failed.' };
}

function* deliveredTexts(events: readonly Buffer[]): Generator<string> {
  for (const event of events) {
    const parsed = eventJsonObject(event);
    if (parsed === null) continue;
    if (parsed.type === 'response.output_item.added') {
      const item = parsed.item as { type?: unknown; name?: unknown } | undefined;
      if (item?.type === 'function_call') yield text(item.name);
    } else yield text(parsed.delta);
  }
}
