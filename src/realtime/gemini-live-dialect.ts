import type { RawData } from 'ws';
import { closeReasonText, type RealtimeDialect } from './realtime-dialect.js';
import { usageOfLiveMetadata } from './gemini-live-usage.js';

const USAGE_KEY = Buffer.from('"usageMetadata"');
const MODEL_TURN_KEY = Buffer.from('"modelTurn"');
const TOOL_CALL_KEY = Buffer.from('"toolCall"');

function frameBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/** The top-level fields of a server message, or null when it is not a JSON object. */
function parseMessage(frame: Buffer): Record<string, unknown> | null {
  try {
    const message: unknown = JSON.parse(frame.toString('utf8'));
    return typeof message === 'object' && message !== null && !Array.isArray(message) ? (message as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Gemini's Live protocol (BidiGenerateContent): server messages are JSON (Google sends them as binary frames, so both
 * kinds are read). A turn starts with the model's first `serverContent.modelTurn` or a `toolCall`, and a message with
 * `usageMetadata` reports what one turn used: each such message is billed once. The protocol has no error event:
 * a session ends with a close code and the reason as text, and a draining server sends `goAway` with the time left.
 * Nothing cancels a turn: when the caller leaves mid-turn the upstream is kept briefly for the turn's usage.
 */
export const geminiLiveDialect: RealtimeDialect = {
  protocol: 'gemini-live',
  watch(data) {
    const frame = frameBuffer(data);
    if (frame.includes(USAGE_KEY)) {
      const message = parseMessage(frame);
      if (message !== null && message.usageMetadata !== undefined) {
        const content = message.serverContent as { interrupted?: unknown } | undefined;
        return { kind: 'response-done', status: content?.interrupted === true ? 'cancelled' : 'completed', usage: usageOfLiveMetadata(message.usageMetadata) };
      }
    }
    if (frame.includes(MODEL_TURN_KEY) || frame.includes(TOOL_CALL_KEY)) return { kind: 'response-started' };
    return null;
  },
  errorFrame: () => null,
  closeReason: (error) => closeReasonText(error.message),
  cancelFrame: () => null,
  drainNotice: (deadlineMs) => JSON.stringify({ goAway: { timeLeft: `${Math.max(0, Math.floor(deadlineMs / 1000))}s` } }),
};
