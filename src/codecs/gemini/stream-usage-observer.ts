import type { Usage } from '../../ir/usage.js';
import type { PassThroughStreamObserver } from '../client-codec.js';
import { isJsonObject } from './gemini-api.js';
import { usageFromGemini } from './read-usage.js';
import { eventPayload } from './sse-data.js';

const USAGE_KEY = Buffer.from('"usageMetadata"');
const FINISH_REASON_KEY = Buffer.from('"finishReason"');
const TEXT_KEY = Buffer.from('"text"');
/** Bytes of a chunk that are not answer text (candidates, role, index, modelVersion, responseId), roughly. */
const ENVELOPE_BYTES = 160;
const BYTES_PER_TOKEN = 4;

/**
 * Watches a Gemini stream on the pass-through path. Gemini repeats `usageMetadata` as a running total in every
 * chunk, so the observer only keeps a reference to the last event that carries one and parses that single event
 * when usage is asked for: no per-chunk JSON parsing. If no event carried usage (a stream cut before its first
 * report), output is estimated from the size of the text events. Every event is forwarded.
 *
 * Events are SSE events (the relay asks the upstream for `alt=sse` and splits on blank lines) or, equally,
 * bare elements of the streamed JSON array.
 */
export class GeminiStreamUsageObserver implements PassThroughStreamObserver {
  #lastUsageEvent: Buffer | null = null;
  #events = 0;
  #textBytes = 0;

  #completed = false;

  completed(): boolean {
    return this.#completed;
  }

  observe(event: Buffer): boolean {
    this.#events += 1;
    if (event.includes(FINISH_REASON_KEY)) this.#completed = true;
    if (event.includes(USAGE_KEY)) this.#lastUsageEvent = event;
    if (event.includes(TEXT_KEY)) this.#textBytes += Math.max(0, event.length - ENVELOPE_BYTES);
    return true;
  }

  usage(promptTokensEstimate: number): Usage | null {
    const reported = this.#reported();
    if (reported !== null) return reported;
    if (this.#events === 0) return null;
    const output = Math.ceil(this.#textBytes / BYTES_PER_TOKEN);
    const input = Math.max(0, Math.floor(promptTokensEstimate));
    return { input: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, output: { total: output, text: output, reasoning: 0 } };
  }

  #reported(): Usage | null {
    if (this.#lastUsageEvent === null) return null;
    const payload = eventPayload(this.#lastUsageEvent);
    if (payload === null) return null;
    try {
      const chunk: unknown = JSON.parse(payload);
      return isJsonObject(chunk) ? usageFromGemini(chunk.usageMetadata) : null;
    } catch {
      return null;
    }
  }
}
