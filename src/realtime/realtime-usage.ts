import type { Usage } from '../ir/usage.js';

/** A count from the wire: a non-negative integer, else 0 (the upstream is read tolerantly). */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The usage of one OpenAI Realtime `response.done` event's `response.usage`: input tokens (cached ones among them,
 * text, audio and image), output tokens (text and audio), with the audio tokens kept apart so they are billed at the
 * audio prices. Null when the event carries no usage object.
 */
export function usageOfRealtimeResponse(usage: unknown): Usage | null {
  if (typeof usage !== 'object' || usage === null) return null;
  const fields = objectOf(usage);
  const inputDetails = objectOf(fields.input_token_details);
  const cachedDetails = objectOf(inputDetails.cached_tokens_details);
  const outputDetails = objectOf(fields.output_token_details);
  const input = count(fields.input_tokens);
  const cacheRead = Math.min(input, count(inputDetails.cached_tokens));
  const output = count(fields.output_tokens);
  const audioInput = Math.min(input, count(inputDetails.audio_tokens));
  const audioCached = Math.min(audioInput, cacheRead, count(cachedDetails.audio_tokens));
  const audioOutput = Math.min(output, count(outputDetails.audio_tokens));
  const result: Usage = {
    input: { total: input, noCache: input - cacheRead, cacheRead, cacheWrite: 0 },
    output: { total: output, text: output - audioOutput, reasoning: 0 },
  };
  if (audioInput + audioOutput > 0) result.audio = { input: audioInput, cacheRead: audioCached, output: audioOutput };
  return result;
}
