import type { Usage } from '../ir/usage.js';
import { countTextTokensLocally } from '../tokenize/count-tokens-locally.js';

export interface DeliveredAnswer {
  /** The latest usage the upstream reported (running totals), or null. */
  reported: Usage | null;
  /** The reported usage covers the whole answer. */
  final: boolean;
  /** The answer text that reached the caller (text, reasoning, tool names and arguments). */
  deliveredText: () => string;
  /** Input tokens of the request counted locally, for when the upstream reported none. */
  promptTokens: () => Promise<number>;
}

/**
 * What a stream is billed for. The upstream's closing usage when it arrived; otherwise (a stream cut by a fault or
 * by the caller, or an upstream that reports no usage) the delivered text counted with the local tokenizer, never
 * less than the output the upstream already reported, and the input as reported or counted locally. Nothing
 * delivered: nothing billed.
 */
export async function usageOfDelivered(answer: DeliveredAnswer): Promise<Usage | null> {
  const { reported } = answer;
  if (reported !== null && answer.final) return reported;
  const counted = await countTextTokensLocally(answer.deliveredText());
  if (counted === 0) return null;
  const reportedOutput = reported?.output.total ?? 0;
  const input = reported !== null && reported.input.total > 0
    ? reported.input
    : ((tokens: number) => ({ total: tokens, noCache: tokens, cacheRead: 0, cacheWrite: 0 }))(await answer.promptTokens());
  if (reported !== null && reportedOutput >= counted) return { input, output: reported.output };
  const reasoning = reported?.output.reasoning ?? 0;
  return { input, output: { total: counted, text: counted - Math.min(reasoning, counted), reasoning: Math.min(reasoning, counted) } };
}
