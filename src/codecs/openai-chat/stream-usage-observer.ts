import type { Usage } from '../../ir/usage.js';
import type { PassThroughStreamObserver } from '../client-codec.js';
import { usageFromOpenAI } from './read-usage.js';
import { eventData } from './sse-event-splitter.js';

const USAGE_OBJECT = [Buffer.from('"usage":{'), Buffer.from('"usage": {')];
const DELTA = Buffer.from('"delta"');

/**
 * Watches an OpenAI chat-completions SSE stream on the side of the pass-through path: picks up the usage
 * chunk, counts delta events (a fallback estimate of output tokens if the stream is cut before usage), and tells
 * whether an event goes to the client. Only events that carry a usage object are parsed.
 */
export class OpenAIStreamUsageObserver {
  usage: Usage | null = null;
  deltaEvents = 0;

  /** @param clientWantsUsage false: the usage-only chunk the gateway asked for is dropped again. */
  constructor(private readonly clientWantsUsage: boolean) {}

  /** Returns true when the event must be forwarded to the client. */
  observe(event: Buffer): boolean {
    if (USAGE_OBJECT.some((needle) => event.includes(needle))) {
      const data = eventData(event);
      if (data !== null) {
        try {
          const chunk = JSON.parse(data) as { usage?: unknown; choices?: unknown };
          this.usage = usageFromOpenAI(chunk.usage) ?? this.usage;
          if (!this.clientWantsUsage && Array.isArray(chunk.choices) && chunk.choices.length === 0) return false;
        } catch {
          // not JSON: forward as it is
        }
      }
      return true;
    }
    if (event.includes(DELTA)) this.deltaEvents += 1;
    return true;
  }
}

/**
 * Without a usage chunk (stream cut short), each delivered delta event counts as one output token; the first delta
 * (the role chunk) carries none. Null when nothing was delivered.
 */
export function estimateStreamUsage(deltaEvents: number, promptTokensEstimate: number): Usage | null {
  if (deltaEvents === 0) return null;
  const output = Math.max(0, deltaEvents - 1);
  return {
    input: { total: promptTokensEstimate, noCache: promptTokensEstimate, cacheRead: 0, cacheWrite: 0 },
    output: { total: output, text: output, reasoning: 0 },
  };
}

/** A non-null finish reason or the end marker: the answer is complete. */
const FINISH_MARKERS = [Buffer.from('"finish_reason":"'), Buffer.from('"finish_reason": "'), Buffer.from('data: [DONE]')];

/**
 * The codec-facing form of the observer (`PassThroughStreamObserver`): `usage(promptTokensEstimate)` answers the
 * usage seen, or the delta-count estimate. A wrapper rather than the class itself, because the class's public
 * `usage` field (read by the relay and its tests) cannot also be the interface's `usage()` method.
 */
export class OpenAIPassThroughObserver implements PassThroughStreamObserver {
  readonly #observer: OpenAIStreamUsageObserver;

  constructor(clientWantsUsage: boolean) {
    this.#observer = new OpenAIStreamUsageObserver(clientWantsUsage);
  }

  #completed = false;

  observe(event: Buffer): boolean {
    const forward = this.#observer.observe(event);
    if (forward && !this.#completed && (FINISH_MARKERS.some((marker) => event.includes(marker)))) this.#completed = true;
    return forward;
  }

  completed(): boolean {
    return this.#completed;
  }

  usage(promptTokensEstimate: number): Usage | null {
    return this.#observer.usage ?? estimateStreamUsage(this.#observer.deltaEvents, promptTokensEstimate);
  }
}
