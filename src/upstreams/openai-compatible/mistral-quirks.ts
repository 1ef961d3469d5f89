import { createHash } from 'node:crypto';
import { dropFields, messagesOf, reportQuirk, type QuirkContext, type WireBody } from './preset.js';

const MISTRAL_TOOL_CALL_ID = /^[A-Za-z0-9]{9}$/;

/**
 * Mistral takes tool call ids of exactly nine letters and digits; ids of other providers (`call_…`, `toolu_…`) are
 * mapped to nine characters derived from them, the same in the assistant turn and its tool results.
 */
export function mistralToolCallId(id: string): string {
  if (MISTRAL_TOOL_CALL_ID.test(id)) return id;
  return createHash('sha256').update(id).digest('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 9).padEnd(9, '0');
}

/**
 * Mistral's chat API rejects fields it does not know (HTTP 422): `seed` is `random_seed` there,
 * `max_completion_tokens` is `max_tokens`, and `stream_options`, `user`, `logit_bias`, `logprobs`, `top_logprobs`,
 * `service_tier`, `store` and `metadata` are dropped. Tool call ids are made Mistral's.
 */
export function adjustMistralBody(body: WireBody, context: QuirkContext): void {
  if (body.seed !== undefined) {
    body.random_seed = body.seed;
    delete body.seed;
  }
  if (body.max_completion_tokens !== undefined) {
    body.max_tokens ??= body.max_completion_tokens;
    delete body.max_completion_tokens;
  }
  delete body.stream_options; // Mistral always ends a stream with its usage
  dropFields(body, ['user', 'logit_bias', 'logprobs', 'top_logprobs', 'service_tier', 'store', 'metadata', 'reasoning_effort'], context, 'Mistral does not take it.');
  let remapped = false;
  for (const message of messagesOf(body)) {
    if (Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls as Array<{ id?: unknown }>) {
        if (typeof call.id === 'string' && !MISTRAL_TOOL_CALL_ID.test(call.id)) {
          call.id = mistralToolCallId(call.id);
          remapped = true;
        }
      }
    }
    if (typeof message.tool_call_id === 'string' && !MISTRAL_TOOL_CALL_ID.test(message.tool_call_id)) {
      message.tool_call_id = mistralToolCallId(message.tool_call_id);
      remapped = true;
    }
  }
  if (remapped) reportQuirk(context, "Tool call ids were shortened to Mistral's nine-character form.");
}
