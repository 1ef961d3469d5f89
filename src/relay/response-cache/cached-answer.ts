import type { FinishReason } from '../../ir/finish-reason.js';
import type { ContentPart } from '../../ir/message.js';
import type { Usage } from '../../ir/usage.js';

/** A complete answer as the cache keeps it: canonical, so any family's codec can replay it, unary or streamed. */
export interface CachedAnswer {
  content: ContentPart[];
  finishReason: FinishReason;
  usage: Usage;
}

/** The stored form (JSON text), checked on the way back in: a malformed entry reads as a miss. */
export function serializeAnswer(answer: CachedAnswer): string {
  return JSON.stringify({ v: 1, content: answer.content, finishReason: answer.finishReason, usage: answer.usage });
}

export function parseAnswer(text: string): CachedAnswer | null {
  try {
    const parsed = JSON.parse(text) as { v?: unknown; content?: unknown; finishReason?: unknown; usage?: unknown };
    if (parsed.v !== 1 || !Array.isArray(parsed.content) || typeof parsed.finishReason !== 'object' || parsed.finishReason === null) return null;
    const usage = parsed.usage as Usage | undefined;
    if (typeof usage?.input?.total !== 'number' || typeof usage.output?.total !== 'number') return null;
    return { content: parsed.content as ContentPart[], finishReason: parsed.finishReason as FinishReason, usage };
  } catch {
    return null;
  }
}
