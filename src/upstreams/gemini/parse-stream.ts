import type { ChatRequest } from '../../ir/chat-request.js';
import type { FinishReason } from '../../ir/finish-reason.js';
import type { StreamPart } from '../../ir/stream-part.js';
import type { Usage } from '../../ir/usage.js';
import { isJsonObject, parseJson, type JsonObject } from '../../wire/gemini/gemini-wire.js';
import { blockedPromptFinishReason, mapGeminiFinishReason } from '../../wire/gemini/finish-reason.js';
import { firstCandidate, newResponseId, newToolCallId, partsOf } from './parse-response.js';
import { addGroundingQueries, usageFromGemini as usageFromUsageMetadata, withGroundingSearches } from '../../wire/gemini/usage.js';
import { readStreamChunks } from './read-stream-chunks.js';
import { citationsByBlock, groundingOf } from './grounding.js';

type ErrorPart = Extract<StreamPart, { type: 'error' }>;

/** A function call of the current step, held until the step's parts are all known. */
interface HeldCall {
  toolCallId: string;
  name: string;
  argumentsJson: string;
  signature?: string;
}

/** The parser's state across chunks; parts it produces wait in `parts` until the generator yields them. */
class StreamState {
  readonly parts: StreamPart[] = [];
  #started = false;
  #block: { kind: 'text' | 'reasoning'; id: string } | null = null;
  /** The signature that ends the open block, once a part carried it (the block closes at the end of the chunk). */
  #endingSignature: string | undefined;
  /**
   * The function calls of the current step. Gemini sends each call whole and its calls last; they are held until a
   * part of another kind or the end, so that a signature Gemini sends after them (an empty text part that carries
   * only a thoughtSignature) still reaches the step's first call, where Gemini 3 wants it back.
   */
  readonly #calls: HeldCall[] = [];
  /** The answer's text blocks so far, with their whole text, for citing grounded spans in them. */
  readonly #texts: Array<{ id: string; text: string }> = [];
  #blocks = 0;
  #toolCalls = 0;
  #usage: Usage | null = null;
  #usageKey = '';
  /** The distinct search queries of the grounding so far: the answer's web searches. */
  readonly #searchQueries = new Set<string>();
  /** Gemini's finishReason of the last chunk, or the blockReason of a prompt blocked before any candidate. */
  #finish: { raw: string; blocked: boolean } | null = null;

  constructor(private readonly request: ChatRequest) {}

  get started(): boolean {
    return this.#started;
  }

  chunk(chunk: JsonObject): void {
    if (!this.#started) {
      this.#started = true;
      const id = typeof chunk.responseId === 'string' && chunk.responseId !== '' ? chunk.responseId : newResponseId();
      this.parts.push({ type: 'response-start', id, model: this.request.model, created: Math.floor(Date.now() / 1000) });
    }
    const candidate = firstCandidate(chunk);
    for (const part of partsOf(candidate)) this.#part(part);
    this.#grounding(candidate);
    // A block a signature ended stays open through the chunk, so the chunk's grounding can still cite it.
    if (this.#endingSignature !== undefined) this.#closeBlock();
    addGroundingQueries(chunk, this.#searchQueries);
    const reported = usageFromUsageMetadata(chunk.usageMetadata);
    const usage = reported === null ? null : withGroundingSearches(reported, this.#searchQueries);
    if (usage !== null) {
      const key = JSON.stringify(usage);
      if (key !== this.#usageKey) this.parts.push({ type: 'usage', usage });
      this.#usage = usage;
      this.#usageKey = key;
    }
    if (candidate !== null && typeof candidate.finishReason === 'string') this.#finish = { raw: candidate.finishReason, blocked: false };
    const feedback = chunk.promptFeedback;
    if (candidate === null && isJsonObject(feedback) && typeof feedback.blockReason === 'string') this.#finish = { raw: feedback.blockReason, blocked: true };
  }

  /** The closing parts: `finish`, or an error when the stream ended before Gemini's last chunk. */
  end(): void {
    this.#closeBlock();
    this.#releaseCalls();
    if (this.#finish === null) {
      this.parts.push(streamEndedEarly());
      return;
    }
    const reason: FinishReason = this.#finish.blocked
      ? blockedPromptFinishReason(this.#finish.raw)
      : mapGeminiFinishReason(this.#finish.raw, this.#toolCalls > 0);
    // Grounding that came after the last usage still counts its searches.
    const usage = this.#usage === null ? null : withGroundingSearches(this.#usage, this.#searchQueries);
    this.parts.push({ type: 'finish', reason, usage });
  }

  /** When the stream breaks off, the calls already complete go out before the error. */
  flushBeforeError(): void {
    this.#releaseCalls();
  }

  #part(part: JsonObject): void {
    const signature = typeof part.thoughtSignature === 'string' ? part.thoughtSignature : undefined;
    if (typeof part.text === 'string') {
      const kind = part.thought === true ? 'reasoning' : 'text';
      if (kind === 'text' && part.text === '' && signature !== undefined && this.#signFirstCall(signature)) return;
      this.#releaseCalls();
      if (this.#endingSignature !== undefined) this.#closeBlock();
      const id = this.#openBlock(kind);
      if (part.text !== '') this.parts.push({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', id, delta: part.text });
      if (kind === 'text') {
        const last = this.#texts.at(-1);
        if (last?.id === id) last.text += part.text;
        else this.#texts.push({ id, text: part.text });
      }
      if (signature !== undefined) this.#endingSignature = signature;
      return;
    }
    const call = part.functionCall;
    if (isJsonObject(call) && typeof call.name === 'string') {
      this.#closeBlock();
      const toolCallId = typeof call.id === 'string' && call.id !== '' ? call.id : newToolCallId();
      const held: HeldCall = { toolCallId, name: call.name, argumentsJson: JSON.stringify(isJsonObject(call.args) ? call.args : {}) };
      if (signature !== undefined) held.signature = signature;
      this.#calls.push(held);
    }
    // inlineData and built-in tool parts have no stream part: they are not streamed in translation.
  }

  /** A signature sent after the step's calls belongs to the first of them, when that one came without its own. */
  #signFirstCall(signature: string): boolean {
    const first = this.#calls[0];
    if (first === undefined || first.signature !== undefined) return false;
    first.signature = signature;
    return true;
  }

  #releaseCalls(): void {
    for (const call of this.#calls.splice(0)) {
      const id = `tool-${this.#blocks++}`;
      const start = { type: 'tool-input-start' as const, id, toolCallId: call.toolCallId, toolName: call.name, index: this.#toolCalls++ };
      this.parts.push(call.signature === undefined ? start : { ...start, signature: call.signature });
      this.parts.push({ type: 'tool-input-delta', id, delta: call.argumentsJson });
      this.parts.push({ type: 'tool-input-end', id });
    }
  }

  /** Google Search grounding (sent with the last chunks): the searches, and citations of the text blocks. */
  #grounding(candidate: JsonObject | null): void {
    const grounding = groundingOf(candidate);
    if (grounding === null) return;
    for (const search of grounding.searches) {
      this.parts.push(search.query === undefined ? { type: 'web-search', id: search.id, sources: search.sources } : { type: 'web-search', id: search.id, query: search.query, sources: search.sources });
    }
    citationsByBlock(this.#texts.map((block) => block.text), grounding.supports).forEach((citations, index) => {
      const id = (this.#texts[index] as { id: string }).id;
      for (const citation of citations) this.parts.push({ type: 'text-citation', id, citation });
    });
  }

  #openBlock(kind: 'text' | 'reasoning'): string {
    if (this.#block !== null && this.#block.kind === kind) return this.#block.id;
    this.#closeBlock();
    const id = `${kind}-${this.#blocks++}`;
    this.#block = { kind, id };
    this.parts.push({ type: kind === 'text' ? 'text-start' : 'reasoning-start', id });
    return id;
  }

  #closeBlock(): void {
    const block = this.#block;
    const signature = this.#endingSignature;
    this.#endingSignature = undefined;
    if (block === null) return;
    this.#block = null;
    const type = block.kind === 'text' ? 'text-end' : 'reasoning-end';
    this.parts.push(signature === undefined ? { type, id: block.id } : { type, id: block.id, signature });
  }
}

function streamEndedEarly(): ErrorPart {
  return { type: 'error', status: 502, code: 'upstream_error', message: 'The upstream provider ended the stream before it finished.' };
}

/**
 * An error object inside the stream (`{"error": {code, status, message}}`, how Google reports failures after the
 * first byte). Google's message is not passed on: it may name the upstream project or key.
 */
function upstreamStreamError(error: unknown): ErrorPart {
  const code = isJsonObject(error) && typeof error.code === 'number' ? error.code : 500;
  const status = isJsonObject(error) && typeof error.status === 'string' ? error.status : 'UNKNOWN';
  const unavailable = code === 429 || code === 503;
  return {
    type: 'error',
    status: unavailable ? 503 : 502,
    code: unavailable ? 'upstream_unavailable' : 'upstream_error',
    message: `The upstream provider failed during the stream (${code} ${status}).`,
  };
}

/**
 * Turns Gemini's stream chunks into canonical parts, keeping the documented order: one `response-start`; text
 * and thoughts as text / reasoning blocks (one block while parts of a kind follow each other; a part's
 * thoughtSignature ends its block with that signature); each function call as tool-input-start (with its
 * signature), one delta with the whole arguments and tool-input-end, once the step's calls are complete; `usage`
 * whenever the running total changes; `finish` last with the latest usage. Everything the stream carries arrives
 * before `finish`, because Gemini ends the body right after its last chunk.
 */
export async function* parseGeminiStream(body: AsyncIterable<Buffer>, request: ChatRequest): AsyncIterable<StreamPart> {
  const state = new StreamState(request);
  try {
    for await (const text of readStreamChunks(body)) {
      const chunk = parseJson(text);
      if (!isJsonObject(chunk)) {
        yield { type: 'error', status: 502, code: 'upstream_error', message: 'The upstream provider sent a stream chunk the gateway could not read.' };
        return;
      }
      if (chunk.error !== undefined) {
        state.flushBeforeError();
        yield* state.parts.splice(0);
        yield upstreamStreamError(chunk.error);
        return;
      }
      state.chunk(chunk);
      yield* state.parts.splice(0);
    }
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    yield { type: 'error', status: 502, code: 'upstream_error', message: 'The upstream provider sent a stream the gateway could not read.' };
    return;
  }
  if (!state.started) {
    yield streamEndedEarly();
    return;
  }
  state.end();
  yield* state.parts.splice(0);
}
