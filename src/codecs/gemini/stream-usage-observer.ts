import type { AnswerFacts } from '../../ir/answer-facts.js';
import type { Usage } from '../../ir/usage.js';
import { geminiAnswerFacts } from '../../wire/gemini/answer-facts.js';
import type { OpeningEvent } from '../client-codec.js';
import { CostingObserver } from '../answer-cost.js';
import { isJsonObject } from '../../wire/gemini/gemini-wire.js';
import { addGroundingQueries, usageFromGemini, withGroundingSearches } from '../../wire/gemini/usage.js';
import { eventPayload } from '../../wire/gemini/event-payload.js';

const USAGE_KEY = Buffer.from('"usageMetadata"');
const FINISH_REASON_KEY = Buffer.from('"finishReason"');
const CANDIDATES_KEY = Buffer.from('"candidates"');
const ERROR_KEY = Buffer.from('"error"');
const SEARCH_QUERIES_KEY = Buffer.from('"webSearchQueries"');

function parse(event: Buffer): Record<string, unknown> | null {
  const payload = eventPayload(event);
  if (payload === null) return null;
  try {
    const chunk: unknown = JSON.parse(payload);
    return isJsonObject(chunk) ? chunk : null;
  } catch {
    return null;
  }
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * Watches a Gemini stream on the pass-through path. Gemini repeats `usageMetadata` as a running total in every
 * chunk, so the observer only keeps a reference to the last event that carries one and parses that single event
 * (and the few that carry grounding search queries) when usage is asked for: no per-chunk JSON parsing. Candidate events are kept by reference, and their text is
 * read only when the stream is cut before its closing usage. Every event is forwarded.
 *
 * Events are SSE events (the relay asks the upstream for `alt=sse` and splits on blank lines) or, equally,
 * bare elements of the streamed JSON array.
 */
export class GeminiStreamUsageObserver extends CostingObserver {
  #lastUsageEvent: Buffer | null = null;
  /** Events with Google Search grounding queries (the last chunks, by reference): their searches are billed. */
  readonly #groundingEvents: Buffer[] = [];
  /** Candidate events not read yet (see `takeDeliveredText`). */
  #candidates: Buffer[] = [];
  /** The first candidate event (by reference; read only for traces). */
  #firstCandidate: Buffer | null = null;
  #completed = false;
  #finalUsage = false;
  /** The last event that says how the answer finished (by reference; read only for traces). */
  #finishEvent: Buffer | null = null;

  completed(): boolean {
    return this.#completed;
  }

  observe(event: Buffer): boolean {
    const finishes = event.includes(FINISH_REASON_KEY);
    if (finishes) {
      this.#completed = true;
      this.#finishEvent = event;
    }
    if (event.includes(USAGE_KEY)) {
      this.#lastUsageEvent = event;
      // The closing chunk carries the finish reason and the final totals (or the totals follow it).
      this.#finalUsage = this.#completed;
    }
    if (event.includes(CANDIDATES_KEY)) {
      this.#firstCandidate ??= event;
      this.#candidates.push(event);
    }
    if (event.includes(SEARCH_QUERIES_KEY)) this.#groundingEvents.push(event);
    return true;
  }

  opening(event: Buffer): OpeningEvent {
    if (!event.includes(ERROR_KEY) || event.includes(CANDIDATES_KEY)) return { kind: 'content' };
    const error = parse(event)?.error;
    if (!isJsonObject(error)) return { kind: 'content' };
    const code = typeof error.code === 'number' ? error.code : 502;
    return { kind: 'error', status: code >= 400 && code < 600 ? code : 502 };
  }

  reportedUsage(): Usage | null {
    if (this.#lastUsageEvent === null) return null;
    const chunk = parse(this.#lastUsageEvent);
    const usage = chunk === null ? null : usageFromGemini(chunk.usageMetadata);
    if (usage === null || this.#groundingEvents.length === 0) return usage;
    const queries = new Set<string>();
    for (const event of this.#groundingEvents) addGroundingQueries(parse(event), queries);
    return withGroundingSearches(usage, queries);
  }

  usageIsFinal(): boolean {
    return this.#finalUsage;
  }

  answerFacts(): AnswerFacts {
    const event = this.#finishEvent ?? this.#lastUsageEvent ?? this.#firstCandidate;
    return geminiAnswerFacts(event === undefined || event === null ? null : parse(event));
  }

  takeDeliveredText(): Iterable<string> {
    const events = this.#candidates;
    this.#candidates = [];
    return deliveredTexts(events);
  }
}

function* deliveredTexts(events: readonly Buffer[]): Generator<string> {
  for (const event of events) {
    const candidates = parse(event)?.candidates;
    if (Array.isArray(candidates)) yield candidatesText(candidates);
  }
}

/** Text, function names and arguments of one chunk's candidates. */
function candidatesText(candidates: readonly unknown[]): string {
  let result = '';
  for (const candidate of candidates) {
    const parts = isJsonObject(candidate) && isJsonObject(candidate.content) ? candidate.content.parts : undefined;
    if (!Array.isArray(parts)) continue;
    for (const part of parts) {
      if (!isJsonObject(part)) continue;
      result += text(part.text);
      if (isJsonObject(part.functionCall)) result += text(part.functionCall.name) + JSON.stringify(part.functionCall.args ?? {});
    }
  }
  return result;
}
