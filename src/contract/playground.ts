import { z } from 'zod';

/**
 * What one playground answer took: its request id, tokens, cost, time to the whole answer and (streamed) to the first
 * token, and the JSON body the console sent to the gateway's /v1/chat/completions for it (no key). A streamed answer
 * ends with it as its `summary` event; an unstreamed one carries it beside the completion.
 */
export const playgroundSummary = z.strictObject({
  request_id: z.string(),
  model: z.string(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  /** The answer's own usage cost, else the usage log's (null: no usage row was written for it). */
  cost_usd: z.number().nullable(),
  latency_ms: z.number(),
  /** Null when the answer was not streamed. */
  first_token_ms: z.number().nullable(),
  request_body: z.record(z.string(), z.unknown()),
});
export type PlaygroundSummaryJson = z.infer<typeof playgroundSummary>;

/** POST /api/playground/chat unstreamed: the gateway's chat completion as it answered, and the summary. */
export const playgroundCompletion = z.strictObject({
  object: z.literal('playground.completion'),
  completion: z.record(z.string(), z.unknown()),
  summary: playgroundSummary,
});
export type PlaygroundCompletionJson = z.infer<typeof playgroundCompletion>;
