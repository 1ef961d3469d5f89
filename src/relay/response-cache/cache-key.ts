import { createHash } from 'node:crypto';
import type { ChatRequest } from '../../ir/chat-request.js';

/**
 * Wire fields the decoders keep as extensions that do not change the answer (bookkeeping the upstream stores or
 * ignores). Any other extension (logprobs, safety settings, cached content, …) shapes an answer the canonical form
 * cannot hold, so such a request is not cached.
 */
const NEUTRAL_EXTENSIONS: ReadonlySet<string> = new Set(['metadata', 'store', 'user', 'provider']);

/** JSON with object keys sorted and `undefined` left out, so equal requests give equal text whatever their field order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((entry) => (entry === undefined ? 'null' : canonicalJson(entry))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const fields: string[] = [];
  for (const name of Object.keys(record).sort()) {
    const field = record[name];
    if (field === undefined) continue;
    fields.push(`${JSON.stringify(name)}:${canonicalJson(field)}`);
  }
  return `{${fields.join(',')}}`;
}

/**
 * The cache key of a chat request: SHA-256 (hex) over the namespace, the model's public id and everything of the
 * canonical request that shapes the answer (system prompt, messages, tools, tool choice, response format, reasoning
 * and sampling parameters). Streaming, the end-user id, metadata and the caller's provider preference are left out,
 * so a streamed request is answered from a non-streamed original and the other way round, in any family.
 * Null when the request carries a field the cache cannot honour.
 */
export function responseCacheKey(namespace: string, modelId: string, chat: ChatRequest): string | null {
  for (const name of Object.keys(chat.extensions)) {
    if (!NEUTRAL_EXTENSIONS.has(name)) return null;
  }
  const shaping = {
    model: modelId,
    system: chat.system,
    messages: chat.messages,
    maxOutputTokens: chat.maxOutputTokens,
    temperature: chat.temperature,
    topP: chat.topP,
    topK: chat.topK,
    stopSequences: chat.stopSequences,
    seed: chat.seed,
    presencePenalty: chat.presencePenalty,
    frequencyPenalty: chat.frequencyPenalty,
    tools: chat.tools,
    hostedTools: chat.hostedTools,
    toolChoice: chat.toolChoice,
    parallelToolCalls: chat.parallelToolCalls,
    responseFormat: chat.responseFormat,
    reasoning: chat.reasoning,
  };
  return createHash('sha256').update(namespace).update('\n').update(canonicalJson(shaping)).digest('hex');
}
