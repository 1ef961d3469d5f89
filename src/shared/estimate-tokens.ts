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

/**
 * The same estimate from a canonical request (any protocol): text of the system prompt, messages and tools.
 * `toolsJsonBytes`, when the caller's bytes are at hand, is the length of the tools' JSON text as the caller wrote
 * it: the tools are then estimated from it without writing their schemas out again. It is never less than the
 * text it stands for (each tool's name, description and schema as JSON, which it holds besides the member names).
 */
export function estimateChatRequestTokens(request: {
  system: ReadonlyArray<{ text: string }>;
  messages: ReadonlyArray<{ content: ReadonlyArray<{ type: string; text?: string; argumentsJson?: string; content?: ReadonlyArray<{ type: string; text?: string }> }> }>;
  tools?: ReadonlyArray<{ name: string; description?: string; parameters: unknown }>;
}, toolsJsonBytes?: number): number {
  let tokens = 3;
  for (const part of request.system) tokens += estimateTextTokens(part.text);
  for (const message of request.messages) {
    tokens += 4;
    for (const part of message.content) {
      if (part.text !== undefined) tokens += estimateTextTokens(part.text);
      else if (part.argumentsJson !== undefined) tokens += estimateTextTokens(part.argumentsJson);
      else if (part.content !== undefined) for (const inner of part.content) tokens += inner.text === undefined ? 85 : estimateTextTokens(inner.text);
      else tokens += 85;
    }
  }
  if (toolsJsonBytes !== undefined && request.tools !== undefined && request.tools.length > 0) return tokens + Math.ceil(toolsJsonBytes / 4);
  for (const tool of request.tools ?? []) tokens += estimateTextTokens(tool.name + (tool.description ?? '') + JSON.stringify(tool.parameters));
  return tokens;
}
