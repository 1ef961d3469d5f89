/**
 * A cheap token estimate (about four characters a token, plus a few tokens of framing per message) for limits
 * charged before the upstream reports real usage. Not a tokenizer: real usage always replaces it.
 */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function estimateMessagesTokens(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let tokens = 3;
  for (const message of messages) {
    tokens += 4;
    if (message === null || typeof message !== 'object') continue;
    const content = (message as { content?: unknown }).content;
    if (typeof content === 'string') tokens += estimateTextTokens(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (part !== null && typeof part === 'object') {
          const text = (part as { text?: unknown }).text;
          if (typeof text === 'string') tokens += estimateTextTokens(text);
          else tokens += 85; // an image or other non-text part, at the low-detail image rate
        }
      }
    }
  }
  return tokens;
}
