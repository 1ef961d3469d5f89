import type { Usage } from '../../ir/usage.js';
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
