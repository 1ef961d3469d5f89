import type { PassThroughStreamObserver } from '../client-codec.js';
import type { Usage } from '../../ir/usage.js';
import { usageFromAnthropic } from './read-usage.js';

const MESSAGE_START = Buffer.from('message_start');
const MESSAGE_DELTA = Buffer.from('message_delta');
const MESSAGE_STOP = Buffer.from('message_stop');
const CONTENT_DELTA = Buffer.from('content_block_delta');
/** The event name (or the data's leading `type`) sits in an event's first bytes. */
const HEAD_BYTES = 64;

/** The `data:` payload of one SSE event (joined lines), or null. */
function eventData(event: Buffer): string | null {
  let data: string | null = null;
  for (const line of event.toString('utf8').split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line[5] === ' ' ? 6 : 5);
    data = data === null ? value : `${data}\n${value}`;
  }
  return data;
}

function parse(event: Buffer): Record<string, unknown> | null {
  const data = eventData(event);
  if (data === null) return null;
  try {
    const parsed = JSON.parse(data) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Watches an Anthropic Messages SSE stream on the pass-through path. Only `message_start` (input and cache
 * counters) and `message_delta` (cumulative output, and input counters when the upstream repeats them) are parsed;
 * content deltas are counted from their first bytes, for an estimate when the stream is cut before usage.
 * Every event is forwarded.
 */
export class AnthropicStreamUsageObserver implements PassThroughStreamObserver {
  #raw: Record<string, unknown> | null = null;
  #deltaEvents = 0;
  #sawMessageDelta = false;

  #completed = false;

  completed(): boolean {
    return this.#completed;
  }

  observe(event: Buffer): boolean {
    const head = event.subarray(0, HEAD_BYTES);
    if (head.includes(MESSAGE_STOP)) this.#completed = true;
    if (head.includes(CONTENT_DELTA)) {
      this.#deltaEvents += 1;
    } else if (head.includes(MESSAGE_START)) {
      const message = parse(event)?.message;
      if (message !== null && typeof message === 'object') {
        const usage = (message as { usage?: unknown }).usage;
        if (usage !== null && typeof usage === 'object') this.#raw = { ...(usage as Record<string, unknown>) };
      }
    } else if (head.includes(MESSAGE_DELTA)) {
      const usage = parse(event)?.usage;
      if (usage !== null && typeof usage === 'object') {
        this.#sawMessageDelta = true;
        const merged: Record<string, unknown> = { ...(this.#raw ?? {}) };
        for (const [key, value] of Object.entries(usage as Record<string, unknown>)) {
          if (value !== null && value !== undefined) merged[key] = value;
        }
        this.#raw = merged;
      }
    }
    return true;
  }

  usage(promptTokensEstimate: number): Usage | null {
    const reported = usageFromAnthropic(this.#raw);
    if (reported !== null) {
      // A stream cut after message_start still shows its output in the deltas delivered.
      if (!this.#sawMessageDelta && reported.output.total < this.#deltaEvents) {
        const extra = this.#deltaEvents - reported.output.total;
        return { input: reported.input, output: { ...reported.output, total: this.#deltaEvents, text: reported.output.text + extra } };
      }
      return reported;
    }
    if (this.#deltaEvents === 0) return null;
    return {
      input: { total: promptTokensEstimate, noCache: promptTokensEstimate, cacheRead: 0, cacheWrite: 0 },
      output: { total: this.#deltaEvents, text: this.#deltaEvents, reasoning: 0 },
    };
  }
}
