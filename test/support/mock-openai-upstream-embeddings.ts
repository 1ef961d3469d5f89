/**
 * The mock OpenAI upstream's `POST /v1/embeddings`, as OpenAI answers it: deterministic unit vectors derived from
 * each input's text (1536 dimensions unless `dimensions` says fewer), `encoding_format` float or base64
 * (little-endian float32), and usage in prompt tokens.
 */
import { createHash } from 'node:crypto';
import { estimateTokens } from './mock-openai-upstream-wire.js';
import { invalidRequest } from './mock-openai-upstream-wire.js';

const DEFAULT_DIMENSIONS = 1536;

function vectorFor(input: string, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  let seed = createHash('sha256').update(input).digest();
  for (let index = 0; index < dimensions; index += 1) {
    if (index % 8 === 0 && index > 0) seed = createHash('sha256').update(seed).digest();
    vector[index] = (seed.readUInt32LE((index % 8) * 4) / 0xffffffff) * 2 - 1;
  }
  const norm = Math.hypot(...vector);
  for (let index = 0; index < dimensions; index += 1) vector[index] = (vector[index] as number) / norm;
  return vector;
}

export function answerEmbeddings(body: Record<string, unknown>): Record<string, unknown> {
  const model = body.model;
  if (typeof model !== 'string' || model === '') throw invalidRequest("you must provide a model parameter", 'model');
  const input = body.input;
  const inputs: string[] = typeof input === 'string'
    ? [input]
    : Array.isArray(input) && input.length > 0 && input.every((entry) => typeof entry === 'string')
      ? (input as string[])
      : Array.isArray(input) && input.length > 0 && input.every((entry) => typeof entry === 'number')
        ? [String(input.join(' '))]
        : [];
  if (inputs.length === 0 || inputs.some((text) => text === '')) throw invalidRequest("'$.input' is invalid. Please check the API reference.", 'input');
  const dimensions = body.dimensions ?? DEFAULT_DIMENSIONS;
  if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > DEFAULT_DIMENSIONS) {
    throw invalidRequest(`Invalid value for 'dimensions': must be between 1 and ${DEFAULT_DIMENSIONS}.`, 'dimensions');
  }
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') throw invalidRequest(`Invalid value for 'encoding_format': '${String(format)}'.`, 'encoding_format');
  const promptTokens = inputs.reduce((sum, text) => sum + estimateTokens(text), 0);
  return {
    object: 'list',
    data: inputs.map((text, index) => {
      const vector = vectorFor(text, dimensions);
      return { object: 'embedding', index, embedding: format === 'base64' ? Buffer.from(vector.buffer).toString('base64') : Array.from(vector) };
    }),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}
