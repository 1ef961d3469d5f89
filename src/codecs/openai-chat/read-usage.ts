import type { Usage } from '../../ir/usage.js';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/** OpenAI's usage object → canonical usage. Reasoning tokens are part of completion_tokens. */
export function usageFromOpenAI(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const usage = raw as Record<string, unknown>;
  const prompt = count(usage.prompt_tokens);
  const completion = count(usage.completion_tokens);
  const promptDetails = (usage.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const completionDetails = (usage.completion_tokens_details ?? {}) as Record<string, unknown>;
  const cacheRead = Math.min(count(promptDetails.cached_tokens), prompt);
  const reasoning = Math.min(count(completionDetails.reasoning_tokens), completion);
  return {
    input: { total: prompt, noCache: prompt - cacheRead, cacheRead, cacheWrite: 0 },
    output: { total: completion, text: completion - reasoning, reasoning },
  };
}

const USAGE_KEY = Buffer.from('"usage"');

/**
 * Finds the top-level `usage` object of a chat-completion JSON body without parsing the whole body: the last
 * `"usage"` key, then its balanced object. Falls back to a full parse if that fails.
 */
export function findUsageInJson(body: Buffer): Usage | null {
  const at = body.lastIndexOf(USAGE_KEY);
  if (at >= 0) {
    const start = body.indexOf(0x7b /* { */, at + USAGE_KEY.length);
    const end = start < 0 ? -1 : matchingBrace(body, start);
    if (end > 0) {
      try {
        return usageFromOpenAI(JSON.parse(body.subarray(start, end + 1).toString('utf8')));
      } catch {
        // fall through to the full parse
      }
    }
  }
  try {
    return usageFromOpenAI((JSON.parse(body.toString('utf8')) as { usage?: unknown }).usage);
  } catch {
    return null;
  }
}

/** Index of the `}` closing the object opened at `start`, honouring strings; -1 if unbalanced. */
function matchingBrace(buffer: Buffer, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < buffer.length; index += 1) {
    const byte = buffer[index];
    if (inString) {
      if (byte === 0x5c /* \ */) index += 1;
      else if (byte === 0x22 /* " */) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x7b) depth += 1;
    else if (byte === 0x7d /* } */) {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return -1;
}
