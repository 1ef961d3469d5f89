import { base64ToFloat32 } from '../../wire/openai/float32-base64.js';
import { isJsonObject } from '../../wire/json-object.js';
import type { EmbeddingResponse } from '../../ir/embedding.js';
import { malformedUpstreamAnswer } from './upstream-wire-error.js';

function vectorOf(embedding: unknown): number[] | null {
  if (typeof embedding === 'string') return base64ToFloat32(embedding);
  if (Array.isArray(embedding) && embedding.every((value): value is number => typeof value === 'number')) return embedding;
  return null;
}

/** An OpenAI `/embeddings` answer (float arrays or base64 float32) → canonical vectors, in input order. */
export function parseOpenAIEmbeddingResponse(body: Buffer, expectedCount: number): EmbeddingResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw malformedUpstreamAnswer('an embeddings body that is not JSON');
  }
  if (!isJsonObject(parsed) || !Array.isArray(parsed.data)) throw malformedUpstreamAnswer('an embeddings body without data');
  const vectors: Array<number[] | undefined> = Array.from({ length: expectedCount }, () => undefined);
  (parsed.data as unknown[]).forEach((entry, position) => {
    if (!isJsonObject(entry)) return;
    const index = typeof entry.index === 'number' ? entry.index : position;
    const vector = vectorOf(entry.embedding);
    if (vector !== null && index >= 0 && index < expectedCount) vectors[index] = vector;
  });
  if (vectors.some((vector) => vector === undefined)) {
    throw malformedUpstreamAnswer(`${(parsed.data as unknown[]).length} embeddings for ${expectedCount} inputs`);
  }
  const usage = isJsonObject(parsed.usage) ? parsed.usage : {};
  const promptTokens = typeof usage.prompt_tokens === 'number' && usage.prompt_tokens > 0 ? Math.floor(usage.prompt_tokens) : 0;
  return { model: typeof parsed.model === 'string' ? parsed.model : '', vectors: vectors as number[][], inputTokens: promptTokens };
}
