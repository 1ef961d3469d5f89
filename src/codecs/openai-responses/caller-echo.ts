import { isJsonObject, type JsonObject } from './wire-values.js';

const USER = Buffer.from('"user"', 'utf8');

/** The response object of a Responses answer: the body itself, or an event's `response` (created, completed, …). */
function responseObjectOf(value: JsonObject): JsonObject | null {
  if (value.object === 'response') return value;
  return isJsonObject(value.response) ? value.response : null;
}

/** `user` set to null in a response object (OpenAI's answer to a request without one); null when there is none to clear. */
function clearUser(text: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isJsonObject(parsed)) return null;
  const response = responseObjectOf(parsed);
  if (response === null || typeof response.user !== 'string') return null;
  response.user = null;
  return JSON.stringify(parsed);
}

/**
 * A Responses answer from an upstream that was sent the `user` the gateway added (the end customer named only by
 * `x-gateway-customer`), as the caller's own request would have had it: the response object's `user` is null, as
 * OpenAI answers a request without one. Takes a whole JSON answer or one SSE event (`event:`/`data:` lines kept);
 * anything without a `user` goes back unchanged, the same buffer.
 */
export function withoutAddedUser(payload: Buffer): Buffer {
  if (!payload.includes(USER)) return payload;
  const text = payload.toString('utf8');
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    const cleared = clearUser(text);
    return cleared === null ? payload : Buffer.from(cleared, 'utf8');
  }
  // An SSE event: rewrite its data line (a response object is one JSON line).
  let changed = false;
  const lines = text.split('\n').map((line) => {
    if (!line.startsWith('data:')) return line;
    const cleared = clearUser(line.slice(5).trim());
    if (cleared === null) return line;
    changed = true;
    return `data: ${cleared}`;
  });
  return changed ? Buffer.from(lines.join('\n'), 'utf8') : payload;
}
