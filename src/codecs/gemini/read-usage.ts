import type { Usage } from '../../ir/usage.js';
import { usageFromGemini } from '../../wire/gemini/usage-metadata.js';
import { isJsonObject } from './gemini-api.js';

export { usageFromGemini };

/**
 * The usage of a `generateContent` body (or of a whole streamed JSON array, where the last chunk that reports
 * usage holds the running total); null when absent or not JSON.
 */
export function findGeminiUsageInJson(body: Buffer): Usage | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (Array.isArray(parsed)) {
    for (let index = parsed.length - 1; index >= 0; index -= 1) {
      const element: unknown = parsed[index];
      if (isJsonObject(element) && element.usageMetadata !== undefined) return usageFromGemini(element.usageMetadata);
    }
    return null;
  }
  return isJsonObject(parsed) ? usageFromGemini(parsed.usageMetadata) : null;
}
