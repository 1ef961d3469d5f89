import { randomBytes } from 'node:crypto';

/**
 * An id for a Gemini function call that came without one (the Gemini API leaves `functionCall.id` out on most
 * models). Same shape as the ids the rest of the gateway invents: `call_` and 24 hex characters.
 */
export function newToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}
