import { JSON_ARRAY_END, JSON_ARRAY_SEPARATOR, streamErrorObject, type StreamErrorDetails } from './encode-error.js';
import { eventPayload } from '../../wire/gemini/event-payload.js';

/**
 * Pass-through for callers that stream without `alt=sse` (the streamed JSON array). The gateway always asks the
 * upstream for `alt=sse` (clean event boundaries to observe usage on), so the relay:
 * 1. splits the upstream body into SSE events (as for any SSE stream),
 * 2. gives each event to the usage observer,
 * 3. writes `reframer.frame(event)` to the caller instead of the event,
 * 4. writes `reframer.end()` when the upstream ends (also after an error the upstream put in the stream, which
 *    arrives as an ordinary event), or `reframer.fail(error)` instead when the gateway itself gives up mid-stream.
 * The chunks' JSON is forwarded byte for byte; only the framing changes: `[` before the first, `\n,\r\n` between
 * two, `\n]` at the end, which is Google's own framing.
 */
export class GeminiJsonArrayReframer {
  #open = false;
  #closed = false;

  frame(event: Buffer): string {
    if (this.#closed) return '';
    const payload = eventPayload(event);
    if (payload === null || payload.trim() === '') return '';
    if (this.#open) return `${JSON_ARRAY_SEPARATOR}${payload}`;
    this.#open = true;
    return `[${payload}`;
  }

  end(): string {
    if (this.#closed) return '';
    this.#closed = true;
    return this.#open ? JSON_ARRAY_END : '[]';
  }

  /** A failure of the gateway's own after the stream began: the error as the last element, and the array closed. */
  fail(error: StreamErrorDetails): string {
    if (this.#closed) return '';
    this.#closed = true;
    const object = streamErrorObject(error);
    return this.#open ? `${JSON_ARRAY_SEPARATOR}${object}${JSON_ARRAY_END}` : `[${object}]`;
  }
}

/** The caller's framing from the query string: `alt=sse` → SSE, anything else (or none) → the JSON array. */
export function wantsSse(query: URLSearchParams | string | undefined): boolean {
  if (query === undefined) return false;
  const parameters = typeof query === 'string' ? new URLSearchParams(query.startsWith('?') ? query.slice(1) : query) : query;
  return parameters.get('alt')?.toLowerCase() === 'sse';
}
