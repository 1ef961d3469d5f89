import { estimateTextTokens } from '../../shared/estimate-tokens.js';

/** Tokens of one content value: a string, or parts with `text` (other parts at the low-detail image rate). */
function contentTokens(content: unknown): number {
  if (typeof content === 'string') return estimateTextTokens(content);
  if (!Array.isArray(content)) return 0;
  let tokens = 0;
  for (const part of content) {
    if (part === null || typeof part !== 'object') continue;
    const text = (part as { text?: unknown }).text;
    tokens += typeof text === 'string' ? estimateTextTokens(text) : 85;
  }
  return tokens;
}

/**
 * A cheap prompt estimate of a Responses request (instructions, input items, tool definitions) for limits charged
 * before the upstream reports real usage; never a tokenizer, and never billed.
 */
export function estimateResponsesInputTokens(body: Record<string, unknown>): number {
  let tokens = 3;
  if (typeof body.instructions === 'string') tokens += estimateTextTokens(body.instructions);
  const input = body.input;
  if (typeof input === 'string') tokens += 4 + estimateTextTokens(input);
  else if (Array.isArray(input)) {
    for (const item of input) {
      tokens += 4;
      if (item === null || typeof item !== 'object') continue;
      const entry = item as Record<string, unknown>;
      tokens += contentTokens(entry.content) + contentTokens(entry.output) + contentTokens(entry.summary);
      if (typeof entry.arguments === 'string') tokens += estimateTextTokens(entry.arguments);
    }
  }
  if (Array.isArray(body.tools)) tokens += estimateTextTokens(JSON.stringify(body.tools));
  return tokens;
}
