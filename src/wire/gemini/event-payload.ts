import { eventData } from '../sse-event-splitter.js';

/**
 * The JSON text one event of a Gemini stream carries: the `data:` payload of a server-sent event (its data lines
 * joined), or, for a buffer with no data line whose text is JSON itself, that text trimmed: an element of the
 * streamed JSON array, or the bare error object Google sometimes writes into a 200 stream. Null for comments and
 * keep-alives.
 */
export function eventPayload(event: Buffer): string | null {
  const data = eventData(event);
  if (data !== null) return data;
  const trimmed = event.toString('utf8').trim();
  return trimmed.startsWith('{') || trimmed.startsWith('[') ? trimmed : null;
}
