import { newId } from '../shared/ids.js';

/** Close codes the gateway ends a realtime session with (RFC 6455 section 7.4.1). */
export const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  invalidPayload: 1007,
  policy: 1008,
  tooBig: 1009,
  internal: 1011,
  tryAgainLater: 1013,
} as const;

/**
 * What an OpenAI Realtime server event of type `error` says: OpenAI's `invalid_request_error` or `server_error`, or
 * for a caller refused as an HTTP request would be (a revoked key…) that answer's type (`authentication_error`…).
 */
export interface RealtimeErrorDetail {
  type: string;
  code: string;
  message: string;
}

/** The protocol's own `error` server event, as OpenAI sends it (`event_id`, `error.{type, code, message, param, event_id}`). */
export function realtimeErrorEvent(detail: RealtimeErrorDetail): string {
  return JSON.stringify({
    type: 'error',
    event_id: newId('event'),
    error: { type: detail.type, code: detail.code, message: detail.message, param: null, event_id: null },
  });
}

/** The events the gateway reads off the upstream's stream: the rest pass through unread. */
export type WatchedEvent = { type: 'response.created' } | { type: 'response.done'; status: string; usage: unknown };

/** The quoted type names of the watched events: a frame without one is not parsed. */
const MARKERS = ['"response.done"', '"response.created"'];

/**
 * The watched event a text frame carries, else null. Audio deltas (most of the traffic) are not parsed: only a frame
 * that names a watched type is.
 */
export function watchedEvent(frame: Buffer): WatchedEvent | null {
  if (!MARKERS.some((marker) => frame.includes(marker))) return null;
  let event: unknown;
  try {
    event = JSON.parse(frame.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof event !== 'object' || event === null) return null;
  const { type, response } = event as { type?: unknown; response?: { status?: unknown; usage?: unknown } };
  if (type === 'response.created') return { type };
  if (type !== 'response.done') return null;
  return { type, status: typeof response?.status === 'string' ? response.status : 'completed', usage: response?.usage ?? null };
}
