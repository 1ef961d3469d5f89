import { atBatchPrices } from '../billing/batch-pricing.js';
import { DEFAULT_OUTPUT_TOKENS_RESERVED, reservationAmount } from '../billing/reservation-amount.js';
import type { BatchEndpoint, BatchInputError, BatchLineInput } from '../domain/batches.js';
import type { ApiKey, NanoUsd } from '../domain/records.js';
import type { Model, ModelKind } from '../domain/model-records.js';
import { keyMayUse } from '../relay/admission.js';

/** The model kind each batch endpoint serves. */
const ENDPOINT_KINDS: Record<BatchEndpoint, ModelKind> = {
  '/v1/chat/completions': 'chat',
  '/v1/responses': 'chat',
  '/v1/embeddings': 'embedding',
  '/v1/moderations': 'moderation',
  '/v1/messages': 'chat',
  '/v1beta/models/{model}:generateContent': 'chat',
};

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The output cap a line names (`max_completion_tokens`, `max_tokens`, `max_output_tokens`, or Gemini's
 * `generationConfig.maxOutputTokens`), or null.
 */
function outputCap(body: Record<string, unknown>): number | null {
  const config = body.generationConfig ?? body.generation_config;
  const gemini = isObject(config) ? config.maxOutputTokens ?? config.max_output_tokens : undefined;
  for (const value of [body.max_completion_tokens, body.max_tokens, body.max_output_tokens, gemini]) {
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  }
  return null;
}

export type BatchAdmission =
  | { ok: true; worstCaseNano: NanoUsd }
  | { ok: false; errors: BatchInputError[] };

/**
 * Checks every line's model before a batch is queued (it exists, serves the endpoint, the key may use it) and
 * prices the whole file's worst case at batch prices: each prompt at one token a byte of its body (no token is
 * shorter), each answer at its output cap (or the model's, or the default reserve).
 */
export function admitBatchLines(lines: readonly BatchLineInput[], endpoint: BatchEndpoint, key: ApiKey, modelOf: (name: string) => (Model & { maxOutputTokens?: number | null }) | undefined): BatchAdmission {
  const errors: BatchInputError[] = [];
  const kind = ENDPOINT_KINDS[endpoint];
  let worstCaseNano = 0n;
  for (const line of lines) {
    const body = JSON.parse(line.body) as Record<string, unknown>;
    const name = body.model as string;
    const found = modelOf(name);
    if (found === undefined) {
      errors.push({ code: 'model_not_found', message: `The model '${name}' does not exist.`, line: line.line, param: 'body.model' });
      continue;
    }
    if (found.kind !== kind) {
      errors.push({ code: 'model_not_found', message: `The model '${name}' is a ${found.kind} model; ${endpoint} takes a ${kind} model.`, line: line.line, param: 'body.model' });
      continue;
    }
    if (!keyMayUse(key, found, name)) {
      errors.push({ code: 'model_not_allowed', message: `This API key is not allowed to use model '${found.id}'.`, line: line.line, param: 'body.model' });
      continue;
    }
    const model = atBatchPrices(found);
    const prompt = Buffer.byteLength(line.body);
    const output = kind === 'chat' ? (outputCap(body) ?? found.maxOutputTokens ?? DEFAULT_OUTPUT_TOKENS_RESERVED) : 0;
    worstCaseNano += reservationAmount(model.pricing, { promptTokens: prompt, estimatedTokens: prompt + output, producesText: kind === 'chat' });
    if (errors.length >= 100) break;
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, worstCaseNano };
}
