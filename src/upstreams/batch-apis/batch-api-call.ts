import { ProviderBatchRefused } from '../../domain/provider-batches.js';

/** Bounded: a batch API call that hangs is retried on the next pass. */
const CALL_TIMEOUT_MS = 60_000;

/** One call to a provider's batch API: JSON (or raw text with `text`), a 4xx to a creation is a refusal, other failures throw. */
export async function batchApiCall(url: string, init: { method: string; headers: Record<string, string>; body?: string | FormData; creation?: boolean }): Promise<Response> {
  const response = await fetch(url, { method: init.method, headers: init.headers, ...(init.body === undefined ? {} : { body: init.body }), signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
  if (response.ok) return response;
  const text = (await response.text()).slice(0, 500);
  const message = `${init.method} ${new URL(url).pathname} answered ${response.status}: ${text}`;
  if (init.creation === true && response.status >= 400 && response.status < 500 && response.status !== 429) throw new ProviderBatchRefused(message);
  throw new Error(message);
}

/** The non-empty lines of a JSONL text, parsed (a line that is not JSON is skipped). */
export function jsonLines(text: string): unknown[] {
  const parsed: unknown[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      parsed.push(JSON.parse(line));
    } catch {
      // A torn line is not an answer.
    }
  }
  return parsed;
}
