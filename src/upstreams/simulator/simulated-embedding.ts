import { createHash } from 'node:crypto';
import { float32ToBase64 } from '../../wire/openai/float32-base64.js';
import { estimateTextTokens } from '../../shared/estimate-tokens.js';

/** Vector length when neither the request (`dimensions`) nor the channel (`settings.embedding_dimensions`) says. */
export const DEFAULT_SIMULATED_DIMENSIONS = 256;
const MAX_DIMENSIONS = 3072;

/**
 * A deterministic unit vector for an input: the same text always gives the same float32 values (SHA-256 in counter
 * mode spread over [-1, 1], normalised), so similarity search demos behave consistently.
 */
export function simulatedVector(input: string, dimensions: number): number[] {
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block += 1) {
    const digest = createHash('sha256').update(`${block}:${input}`).digest();
    for (let offset = 0; offset + 2 <= digest.length && values.length < dimensions; offset += 2) {
      values.push(digest.readUInt16LE(offset) / 32767.5 - 1);
    }
  }
  const norm = Math.sqrt(values.reduce((sum, value) => sum + value * value, 0)) || 1;
  return values.map((value) => Math.fround(value / norm));
}

function inputsOf(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input)) return [];
  // Token arrays (OpenAI clients may send them) are hashed as their JSON text.
  if (input.every((entry) => typeof entry === 'number')) return [JSON.stringify(input)];
  return input.map((entry: unknown) => (typeof entry === 'string' ? entry : JSON.stringify(entry)));
}

function tokensOf(input: unknown): number {
  if (typeof input === 'string') return estimateTextTokens(input);
  if (!Array.isArray(input)) return 0;
  if (input.every((entry) => typeof entry === 'number')) return input.length;
  return input.reduce((sum: number, entry: unknown) => sum + (typeof entry === 'string' ? estimateTextTokens(entry) : Array.isArray(entry) ? entry.length : 0), 0);
}

/** An OpenAI-shaped `/embeddings` answer for a request body, vectors as floats or base64 float32 as asked. */
export function simulateEmbeddings(body: Record<string, unknown>, settings: Record<string, unknown>): Record<string, unknown> {
  const configured = typeof settings.embedding_dimensions === 'number' ? settings.embedding_dimensions : DEFAULT_SIMULATED_DIMENSIONS;
  const requested = typeof body.dimensions === 'number' && Number.isInteger(body.dimensions) && body.dimensions > 0 ? body.dimensions : configured;
  const dimensions = Math.min(Math.max(1, Math.floor(requested)), MAX_DIMENSIONS);
  const base64 = body.encoding_format === 'base64';
  const data = inputsOf(body.input).map((input, index) => {
    const vector = simulatedVector(input, dimensions);
    return { object: 'embedding', index, embedding: base64 ? float32ToBase64(vector) : vector };
  });
  const tokens = tokensOf(body.input);
  return { object: 'list', data, model: typeof body.model === 'string' ? body.model : 'simulator', usage: { prompt_tokens: tokens, total_tokens: tokens } };
}
