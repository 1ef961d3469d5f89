import type { Usage } from '../../ir/usage.js';
import type { OpeningEvent } from '../client-codec.js';
import { CostingObserver } from '../answer-cost.js';
import type { AnswerFacts } from '../../ir/answer-facts.js';
import { openAIChatAnswerFacts } from '../../wire/openai/answer-facts.js';
import { usageOfChatCompletion } from '../../wire/openai/usage.js';
import { eventJsonObject } from '../../wire/sse-event-splitter.js';
import { isJsonObject } from '../../wire/json-object.js';

export const USAGE_OBJECT = 1;
export const DELTA = 2;
/** A non-null finish reason or the end marker: the answer is complete. */
export const FINISH = 4;
/** Finish events kept for traces: one per choice, and `n` is bounded upstream; this bounds a misbehaving stream. */
const MAX_FINISH_EVENTS = 16;
/**
 * `"usage":{` or `"usage": {`, `"delta"`, `"finish_reason":"` or `"finish_reason": "`, and `data: [DONE]`, all found in
 * one pass over the event (a Buffer.includes per marker costs a native call and a scan each). The lookaheads leave
 * a closing quote unconsumed, so each marker is found wherever a search for it alone would find it.
 */
const MARKERS = /"usage": ?\{|"delta(?=")|"finish_reason": ?(?=")|data: \[DONE\]/g;

/** Which markers an event holds (bit set of USAGE_OBJECT, DELTA, FINISH). */
export function markersOf(event: Buffer): number {
  const text = event.toString('latin1');
  let found = 0;
  MARKERS.lastIndex = 0;
  for (let match = MARKERS.exec(text); match !== null; match = MARKERS.exec(text)) {
    const second = match[0].charCodeAt(1);
    found |= second === 0x75 ? USAGE_OBJECT : second === 0x64 ? DELTA : FINISH;
  }
  return found;
}

/**
 * Watches an OpenAI chat-completions SSE stream on the side of the pass-through path: picks up the usage
 * chunk, keeps the delta events (by reference: their text is read only if the stream is cut before usage), and
 * tells whether an event goes to the client. Only events that carry a usage object are parsed.
 */
export class OpenAIStreamUsageObserver {
  usage: Usage | null = null;
  /** Delta events not read yet (see `takeDeltas`). */
  #deltas: Buffer[] = [];
  #deltaEvents = 0;
  /** The first delta event (by reference; its model is read for traces). */
  firstDelta: Buffer | null = null;

  /** @param clientWantsUsage false: the usage-only chunk the gateway asked for is dropped again. */
  constructor(private readonly clientWantsUsage: boolean) {}

  get deltaEvents(): number {
    return this.#deltaEvents;
  }

  /** The delta events kept since the last call, let go of here. */
  takeDeltas(): Buffer[] {
    const deltas = this.#deltas;
    this.#deltas = [];
    return deltas;
  }

  #keepDelta(event: Buffer): void {
    this.firstDelta ??= event;
    this.#deltaEvents += 1;
    this.#deltas.push(event);
  }

  /** Returns true when the event must be forwarded to the client. */
  observe(event: Buffer, markers: number = markersOf(event)): boolean {
    if ((markers & USAGE_OBJECT) !== 0) {
      const chunk = parseChunk(event);
      if (chunk !== null) {
        this.usage = usageOfChatCompletion(chunk) ?? this.usage;
        if (Array.isArray(chunk.choices) && chunk.choices.length > 0) this.#keepDelta(event);
        else if (!this.clientWantsUsage && Array.isArray(chunk.choices)) return false;
      }
      return true;
    }
    if ((markers & DELTA) !== 0) this.#keepDelta(event);
    return true;
  }
}

interface Chunk {
  usage?: unknown;
  model?: unknown;
  choices?: unknown;
  error?: unknown;
}

/** One chunk of the stream; null for the `[DONE]` marker, comments and anything that is not a JSON object. */
function parseChunk(event: Buffer): Chunk | null {
  return eventJsonObject(event);
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Answer text of one chunk's deltas: content, refusal, reasoning and tool calls (names and argument text). */
export function deltaText(chunk: Chunk): string {
  let result = '';
  if (!Array.isArray(chunk.choices)) return result;
  for (const choice of chunk.choices) {
    if (!isJsonObject(choice) || !isJsonObject(choice.delta)) continue;
    const delta = choice.delta;
    result += text(delta.content) + text(delta.refusal) + text(delta.reasoning_content) + text(delta.reasoning);
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) {
        if (isJsonObject(call) && isJsonObject(call.function)) result += text(call.function.name) + text(call.function.arguments);
      }
    }
  }
  return result;
}

/** The status an in-band OpenAI error stands for: rate limits 429, the caller's own errors 400, the rest 502. */
function errorStatus(error: Record<string, unknown>): number {
  const label = `${text(error.type)} ${text(error.code)}`;
  if (/rate_limit|insufficient_quota/.test(label)) return 429;
  if (/invalid_request|context_length|content_filter/.test(label)) return 400;
  return 502;
}

/** The codec-facing form of the observer (`PassThroughStreamObserver`). */
export class OpenAIPassThroughObserver extends CostingObserver {
  readonly #observer: OpenAIStreamUsageObserver;
  #completed = false;
  /** Events that carry a finish reason (by reference; read only for traces). */
  readonly #finishEvents: Buffer[] = [];

  constructor(clientWantsUsage: boolean) {
    super();
    this.#observer = new OpenAIStreamUsageObserver(clientWantsUsage);
  }

  observe(event: Buffer): boolean {
    const markers = markersOf(event);
    const forward = this.#observer.observe(event, markers);
    if ((markers & FINISH) !== 0) {
      if (forward) this.#completed = true;
      if (this.#finishEvents.length < MAX_FINISH_EVENTS) this.#finishEvents.push(event);
    }
    return forward;
  }

  opening(event: Buffer): OpeningEvent {
    const chunk = parseChunk(event);
    if (chunk === null) return { kind: 'content' };
    if (isJsonObject(chunk.error)) return { kind: 'error', status: errorStatus(chunk.error) };
    // The role chunk (`delta: { role, content: "" }`) says nothing yet; anything with text, a tool call or a finish does.
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    const says = choices.some((choice) => isJsonObject(choice) && (choice.finish_reason != null || (isJsonObject(choice.delta) && (deltaText({ choices: [choice] }) !== '' || Array.isArray(choice.delta.tool_calls)))));
    return says || chunk.usage != null ? { kind: 'content' } : { kind: 'preamble' };
  }

  completed(): boolean {
    return this.#completed;
  }

  reportedUsage(): Usage | null {
    return this.#observer.usage;
  }

  usageIsFinal(): boolean {
    return this.#observer.usage !== null;
  }

  answerFacts(): AnswerFacts {
    const first = this.#observer.firstDelta ?? undefined;
    const finishReasons: string[] = [];
    let model = first === undefined ? null : openAIChatAnswerFacts(parseChunk(first)).model;
    for (const event of this.#finishEvents) {
      const facts = openAIChatAnswerFacts(parseChunk(event));
      model ??= facts.model;
      finishReasons.push(...facts.finishReasons);
    }
    return { model, finishReasons };
  }

  takeDeliveredText(): Iterable<string> {
    return deliveredTexts(this.#observer.takeDeltas());
  }
}

function* deliveredTexts(events: readonly Buffer[]): Generator<string> {
  for (const event of events) {
    const chunk = parseChunk(event);
    if (chunk !== null) yield deltaText(chunk);
  }
}
