import { withHostedTools, type Usage } from '../ir/usage.js';

export interface DeliveredAnswer {
  /** The latest usage the upstream reported (running totals), or null. */
  reported: Usage | null;
  /** The reported usage covers the whole answer. */
  final: boolean;
  /** The upstream accepted the request: some event other than an error arrived (usage, a preamble, content). */
  accepted: boolean;
  /**
   * Tokens of the answer text that reached the caller (text, reasoning, tool names and arguments), counted with the
   * local tokenizer; asked at every checkpoint, so it counts only what was delivered since it was last asked.
   */
  deliveredTokens: () => Promise<number>;
  /** Input tokens of the request counted locally, for when the upstream reported none. */
  promptTokens: () => Promise<number>;
}

/** The output billed for an answer that ended early: the larger of what the upstream reported and what was delivered. */
export function billedOutput(reported: Usage['output'] | null, deliveredTokens: number): Usage['output'] {
  if (reported !== null && reported.total >= deliveredTokens) return reported;
  const reasoning = Math.min(reported?.reasoning ?? 0, deliveredTokens);
  return { total: deliveredTokens, text: deliveredTokens - reasoning, reasoning };
}

/**
 * What a stream is billed for. The upstream's closing usage when it arrived. Otherwise (a stream cut by a fault or
 * by the caller, or an upstream that reports no usage) what the upstream bills once it has accepted the request:
 * the input as reported (or counted locally) plus the larger of the output reported and the output delivered
 * (counted with the local tokenizer). A stream the upstream refused before accepting it is free (null).
 */
export async function usageOfDelivered(answer: DeliveredAnswer): Promise<Usage | null> {
  const { reported } = answer;
  if (reported !== null && answer.final) return reported;
  if (!answer.accepted && reported === null) return null;
  const delivered = await answer.deliveredTokens();
  const input = reported !== null && reported.input.total > 0 ? reported.input : localInput(await answer.promptTokens());
  // Hosted tool calls the upstream reported were made (and billed to the gateway) whether or not the answer ended.
  return withHostedTools({ input, output: billedOutput(reported?.output ?? null, delivered) }, reported?.hostedTools);
}

/**
 * What a stream is billed at its first byte, before its output counts: the input as the upstream reported it so far,
 * else the request's prompt estimate (the one its hold was sized with; no tokenizer run), and any output reported.
 */
export function usageAtFirstByte(reported: Usage | null, promptTokensEstimate: number): Usage {
  const input = reported !== null && reported.input.total > 0 ? reported.input : localInput(promptTokensEstimate);
  return withHostedTools({ input, output: billedOutput(reported?.output ?? null, 0) }, reported?.hostedTools);
}

function localInput(tokens: number): Usage['input'] {
  return { total: tokens, noCache: tokens, cacheRead: 0, cacheWrite: 0 };
}
