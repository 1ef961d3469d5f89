import type { EmbeddingRequest } from '../../ir/embedding.js';
import { bareModelName, isJsonObject, readField, type JsonObject } from '../../wire/gemini/gemini-wire.js';
import { invalidArgument } from './invalid-argument.js';

/** The Gemini API's cap on `batchEmbedContents.requests`. */
export const MAX_BATCH_EMBED_REQUESTS = 100;

interface EmbedOptions {
  taskType?: string;
  dimensions?: number;
}

function modelOf(hints: { pathModel?: string }): string {
  const model = hints.pathModel === undefined ? '' : bareModelName(hints.pathModel).trim();
  if (model === '') throw invalidArgument('model', 'The model is required in the URL: /v1beta/models/{model}:embedContent.');
  return model;
}

/** `:embedContent` `{content, taskType?, title?, outputDimensionality?}` → one canonical input. */
export function decodeGeminiEmbedContentRequest(body: Record<string, unknown>, hints: { pathModel?: string }): EmbeddingRequest {
  const model = modelOf(hints);
  const warnings: string[] = [];
  const input = decodeEmbedContent(body, '', warnings);
  return build(model, [input.text], input.options, warnings);
}

/**
 * `:batchEmbedContents` `{requests: [{model, content, taskType?, outputDimensionality?}]}` → canonical inputs, in
 * order. The canonical request has one task type and one size for all inputs: those of the first request are
 * used, with a warning when later requests differ.
 */
export function decodeGeminiBatchEmbedContentsRequest(body: Record<string, unknown>, hints: { pathModel?: string }): EmbeddingRequest {
  const model = modelOf(hints);
  const requests = readField(body, 'requests');
  if (!Array.isArray(requests) || requests.length === 0) throw invalidArgument('requests', "'requests' must be a non-empty array.");
  if (requests.length > MAX_BATCH_EMBED_REQUESTS) {
    throw invalidArgument('requests', `At most ${MAX_BATCH_EMBED_REQUESTS} requests can be in one batch.`);
  }
  const warnings: string[] = [];
  const inputs = requests.map((request: unknown, index) => {
    const param = `requests[${index}]`;
    if (!isJsonObject(request)) throw invalidArgument(param, `'${param}' must be an object with content.`);
    const requestModel = readField(request, 'model');
    if (requestModel !== undefined && (typeof requestModel !== 'string' || bareModelName(requestModel) !== model)) {
      throw invalidArgument(`${param}.model`, `'${param}.model' must name the model of the URL, models/${model}.`);
    }
    return decodeEmbedContent(request, `${param}.`, warnings);
  });
  const first = inputs[0]?.options ?? {};
  if (inputs.some(({ options }) => options.taskType !== first.taskType || options.dimensions !== first.dimensions)) {
    warnings.push('requests differ in taskType or outputDimensionality; those of requests[0] were applied to all.');
  }
  return build(model, inputs.map(({ text }) => text), first, warnings);
}

function build(model: string, inputs: string[], options: EmbedOptions, warnings: string[]): EmbeddingRequest {
  const request: EmbeddingRequest = { model, inputs, warnings };
  if (options.dimensions !== undefined) request.dimensions = options.dimensions;
  if (options.taskType !== undefined) request.taskType = options.taskType;
  return request;
}

function decodeEmbedContent(request: JsonObject, prefix: string, warnings: string[]): { text: string; options: EmbedOptions } {
  const param = `${prefix}content`;
  const content = readField(request, 'content');
  if (!isJsonObject(content)) throw invalidArgument(param, `'${param}' is required and must be a Content with text parts.`);
  const parts = readField(content, 'parts');
  if (!Array.isArray(parts) || parts.length === 0) throw invalidArgument(`${param}.parts`, `'${param}.parts' must be a non-empty array.`);
  const texts = parts.map((part: unknown, index) => {
    const text = isJsonObject(part) ? readField(part, 'text') : undefined;
    if (typeof text !== 'string') throw invalidArgument(`${param}.parts[${index}]`, `'${param}.parts[${index}]' must be a text part.`);
    return text;
  });
  const options: EmbedOptions = {};
  const taskType = readField(request, 'taskType');
  if (taskType !== undefined && taskType !== null) {
    if (typeof taskType !== 'string') throw invalidArgument(`${prefix}taskType`, `'${prefix}taskType' must be a string.`);
    if (taskType !== 'TASK_TYPE_UNSPECIFIED') options.taskType = taskType;
  }
  const dimensions = readField(request, 'outputDimensionality');
  if (dimensions !== undefined && dimensions !== null) {
    if (typeof dimensions !== 'number' || !Number.isSafeInteger(dimensions) || dimensions < 1) {
      throw invalidArgument(`${prefix}outputDimensionality`, `'${prefix}outputDimensionality' must be a positive integer.`);
    }
    options.dimensions = dimensions;
  }
  if (readField(request, 'title') !== undefined) warnings.push(`${prefix}title has no equivalent in translation and was not applied.`);
  return { text: texts.join('\n'), options };
}
