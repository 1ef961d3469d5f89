import type { ChatRequest, ReasoningOptions, ResponseFormat } from '../../ir/chat-request.js';
import { camelCase, isJsonObject, readField, type JsonObject } from '../../wire/gemini/gemini-wire.js';
import { invalidArgument } from './invalid-argument.js';
import { jsonSchemaFromGemini } from './openapi-schema.js';

/** The fields of `generationConfig` the canonical request carries. */
export type DecodedGenerationConfig = Pick<
  ChatRequest,
  'maxOutputTokens' | 'temperature' | 'topP' | 'topK' | 'stopSequences' | 'seed' | 'presencePenalty' | 'frequencyPenalty' | 'responseFormat' | 'reasoning'
>;

const MAPPED = new Set([
  'temperature',
  'topP',
  'topK',
  'maxOutputTokens',
  'stopSequences',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  '_responseJsonSchema',
  'thinkingConfig',
]);

/** Gemini's cap on stop sequences; the API rejects more. */
export const MAX_STOP_SEQUENCES = 5;

const THINKING_LEVELS: Record<string, NonNullable<ReasoningOptions['effort']>> = {
  MINIMAL: 'minimal',
  LOW: 'low',
  MEDIUM: 'medium',
  HIGH: 'high',
};

/**
 * Validates and maps `generationConfig`. Known fields with no canonical counterpart (candidateCount > 1,
 * responseModalities, speechConfig, logprobs, …) and unknown ones go to `extensions` under
 * `generationConfig.<name>` with a warning: they reach a Gemini upstream only on the pass-through path.
 */
export function decodeGenerationConfig(value: unknown, extensions: JsonObject, warnings: string[]): DecodedGenerationConfig {
  if (value === undefined || value === null) return {};
  if (!isJsonObject(value)) throw invalidArgument('generationConfig', "'generationConfig' must be an object.");
  const config = value;
  const decoded: DecodedGenerationConfig = {};
  const temperature = number(config, 'temperature', 0, 2);
  if (temperature !== undefined) decoded.temperature = temperature;
  const topP = number(config, 'topP', 0, 1);
  if (topP !== undefined) decoded.topP = topP;
  const topK = integer(config, 'topK', 1);
  if (topK !== undefined) decoded.topK = topK;
  const maxOutputTokens = integer(config, 'maxOutputTokens', 1);
  if (maxOutputTokens !== undefined) decoded.maxOutputTokens = maxOutputTokens;
  const seed = integer(config, 'seed', Number.MIN_SAFE_INTEGER);
  if (seed !== undefined) decoded.seed = seed;
  const presencePenalty = number(config, 'presencePenalty', -2, 2);
  if (presencePenalty !== undefined) decoded.presencePenalty = presencePenalty;
  const frequencyPenalty = number(config, 'frequencyPenalty', -2, 2);
  if (frequencyPenalty !== undefined) decoded.frequencyPenalty = frequencyPenalty;
  const stopSequences = decodeStopSequences(readField(config, 'stopSequences'));
  if (stopSequences !== undefined) decoded.stopSequences = stopSequences;
  const responseFormat = decodeResponseFormat(config, extensions, warnings);
  if (responseFormat !== undefined) decoded.responseFormat = responseFormat;
  const reasoning = decodeThinkingConfig(readField(config, 'thinkingConfig'));
  if (reasoning !== undefined) decoded.reasoning = reasoning;
  const candidateCount = integer(config, 'candidateCount', 1);
  for (const [key, field] of Object.entries(config)) {
    const name = camelCase(key);
    if (MAPPED.has(name) || field === undefined || field === null) continue;
    if (name === 'candidateCount' && candidateCount === 1) continue;
    extensions[`generationConfig.${name}`] = field;
    warnings.push(`generationConfig.${name} has no equivalent in translation and was not applied.`);
  }
  return decoded;
}

function param(name: string): string {
  return `generationConfig.${name}`;
}

function number(config: JsonObject, name: string, min: number, max: number): number | undefined {
  const value = readField(config, name);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalidArgument(param(name), `'${param(name)}' must be a number from ${min} to ${max}.`);
  }
  return value;
}

function integer(config: JsonObject, name: string, min: number): number | undefined {
  const value = readField(config, name);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw invalidArgument(param(name), `'${param(name)}' must be an integer${min > 0 ? ` of at least ${min}` : ''}.`);
  }
  return value;
}

function decodeStopSequences(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string' && item !== '')) {
    throw invalidArgument(param('stopSequences'), `'${param('stopSequences')}' must be an array of non-empty strings.`);
  }
  if (value.length > MAX_STOP_SEQUENCES) {
    throw invalidArgument(param('stopSequences'), `'${param('stopSequences')}' may hold at most ${MAX_STOP_SEQUENCES} sequences.`);
  }
  return value.length === 0 ? undefined : value;
}

function decodeResponseFormat(config: JsonObject, extensions: JsonObject, warnings: string[]): ResponseFormat | undefined {
  const mimeType = readField(config, 'responseMimeType');
  if (mimeType !== undefined && mimeType !== null && typeof mimeType !== 'string') {
    throw invalidArgument(param('responseMimeType'), `'${param('responseMimeType')}' must be a string.`);
  }
  const jsonSchema = readField(config, 'responseJsonSchema') ?? config._responseJsonSchema;
  const openApiSchema = readField(config, 'responseSchema');
  for (const [name, schema] of [['responseJsonSchema', jsonSchema], ['responseSchema', openApiSchema]] as const) {
    if (schema !== undefined && schema !== null && !isJsonObject(schema)) throw invalidArgument(param(name), `'${param(name)}' must be an object.`);
  }
  if (isJsonObject(jsonSchema)) return { kind: 'json-schema', schema: jsonSchema };
  if (isJsonObject(openApiSchema)) return { kind: 'json-schema', schema: jsonSchemaFromGemini(openApiSchema) };
  if (mimeType === undefined || mimeType === null || mimeType === '') return undefined;
  if (mimeType === 'application/json') return { kind: 'json' };
  if (mimeType === 'text/plain') return { kind: 'text' };
  extensions[param('responseMimeType')] = mimeType;
  warnings.push(`generationConfig.responseMimeType '${mimeType}' has no equivalent in translation and was not applied.`);
  return undefined;
}

function decodeThinkingConfig(value: unknown): ReasoningOptions | undefined {
  if (value === undefined || value === null) return undefined;
  const name = param('thinkingConfig');
  if (!isJsonObject(value)) throw invalidArgument(name, `'${name}' must be an object.`);
  const reasoning: ReasoningOptions = {};
  const budget = readField(value, 'thinkingBudget');
  if (budget !== undefined && budget !== null) {
    if (typeof budget !== 'number' || !Number.isSafeInteger(budget) || budget < -1) {
      throw invalidArgument(`${name}.thinkingBudget`, `'${name}.thinkingBudget' must be an integer: -1 (automatic), 0 (off) or a token budget.`);
    }
    if (budget >= 0) reasoning.budgetTokens = budget;
  }
  const level = readField(value, 'thinkingLevel');
  if (level !== undefined && level !== null) {
    const effort = typeof level === 'string' ? THINKING_LEVELS[level.toUpperCase()] : undefined;
    if (effort === undefined) throw invalidArgument(`${name}.thinkingLevel`, `'${name}.thinkingLevel' must be one of MINIMAL, LOW, MEDIUM, HIGH.`);
    reasoning.effort = effort;
  }
  const includeThoughts = readField(value, 'includeThoughts');
  if (includeThoughts !== undefined && includeThoughts !== null) {
    if (typeof includeThoughts !== 'boolean') throw invalidArgument(`${name}.includeThoughts`, `'${name}.includeThoughts' must be a boolean.`);
    reasoning.includeThoughts = includeThoughts;
  }
  return Object.keys(reasoning).length === 0 ? undefined : reasoning;
}
