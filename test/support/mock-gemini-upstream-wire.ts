/**
 * Wire pieces of the mock Gemini upstream: Google's error envelope (pretty-printed, as Google sends it), the
 * model catalogue with each model's capabilities, and proto3-JSON field-name handling.
 */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `max_output_tokens` → `maxOutputTokens`: proto3 JSON accepts both spellings of every field. */
export function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** `maxOutputTokens` → `max_output_tokens`, the spelling Google uses in its error paths. */
export function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A field in either spelling. */
export function field(object: JsonObject, name: string): unknown {
  return object[name] ?? object[snake(name)];
}

export interface GoogleErrorBody {
  error: { code: number; message: string; status: string; details?: unknown[] };
}

export class MockGeminiError extends Error {
  constructor(
    readonly status: number,
    readonly body: GoogleErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.error.message);
  }
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'Request contains an invalid argument.',
  401: 'Request had invalid authentication credentials.',
  403: 'The caller does not have permission',
  404: 'Requested entity was not found.',
  429: 'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
  504: 'The request timed out. Please try again.',
};

export function statusName(code: number): string {
  return STATUS_NAMES[code] ?? (code >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

export function errorBody(code: number, message?: string, details?: unknown[]): GoogleErrorBody {
  const error: GoogleErrorBody['error'] = { code, message: message ?? DEFAULT_MESSAGES[code] ?? 'Error', status: statusName(code) };
  if (details !== undefined) error.details = details;
  return { error };
}

export function googleError(code: number, message?: string, details?: unknown[], headers?: Record<string, string>): MockGeminiError {
  return new MockGeminiError(code, errorBody(code, message, details), headers);
}

export function defaultErrorBodyForStatus(code: number): GoogleErrorBody {
  if (code === 429) {
    return errorBody(429, undefined, [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' }]);
  }
  return errorBody(code);
}

/** 400, Google's answer to a request that breaks a validation rule. */
export function invalid(message: string): MockGeminiError {
  return googleError(400, message);
}

/** `Invalid JSON payload received. Unknown name "x" at 'path': Cannot find field.` */
export function unknownField(name: string, at: string | null): MockGeminiError {
  return invalid(`Invalid JSON payload received. Unknown name "${name}"${at === null ? '' : ` at '${at}'`}: Cannot find field.`);
}

export function invalidApiKey(): MockGeminiError {
  const message = 'API key not valid. Please pass a valid API key.';
  return googleError(400, message, [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'API_KEY_INVALID',
      domain: 'googleapis.com',
      metadata: { service: 'generativelanguage.googleapis.com' },
    },
    { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message },
  ]);
}

export function missingApiKey(): MockGeminiError {
  return googleError(
    403,
    "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
  );
}

export function modelNotFound(model: string, version: string, method: string): MockGeminiError {
  return googleError(
    404,
    `models/${model} is not found for API version ${version}, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`,
  );
}

export function invalidJson(): MockGeminiError {
  return invalid('Invalid JSON payload received. Unexpected token.');
}

export interface MockModel {
  name: string;
  displayName: string;
  kind: 'chat' | 'embedding';
  inputTokenLimit: number;
  outputTokenLimit: number;
  /** Thinks before answering (reports thoughtsTokenCount; returns thought parts with includeThoughts). */
  thinking: boolean;
  /** Gemini 3: function calls of the current turn must come back with their thought signature. */
  requiresSignatures: boolean;
  /** Embedding models: default vector size. */
  dimensions: number;
}

export const DEFAULT_MODELS = [
  'gemini-2.5-flash',
  'gemini-2.5-pro',
  'gemini-2.5-flash-lite',
  'gemini-2.0-flash',
  'gemini-3-pro-preview',
  'gemini-3-flash-preview',
  'gemini-embedding-001',
  'text-embedding-004',
] as const;

/** Capabilities by name, so gateway tests may use any model id (ids starting with `unknown-` do not exist). */
export function describeModel(name: string): MockModel {
  const embedding = name.includes('embedding');
  const generation = /gemini-(\d+)(?:\.(\d+))?/.exec(name);
  const major = generation === null ? 0 : Number(generation[1]);
  const minor = generation === null || generation[2] === undefined ? 0 : Number(generation[2]);
  return {
    name,
    displayName: name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => `${dash === '-' ? ' ' : ''}${c.toUpperCase()}`),
    kind: embedding ? 'embedding' : 'chat',
    inputTokenLimit: embedding ? 2048 : 1_048_576,
    outputTokenLimit: embedding ? 1 : 65_536,
    thinking: !embedding && (major > 2 || (major === 2 && minor >= 5)),
    requiresSignatures: !embedding && major >= 3,
    dimensions: name === 'text-embedding-004' ? 768 : 3072,
  };
}

export function modelResource(model: MockModel): JsonObject {
  return {
    name: `models/${model.name}`,
    version: '001',
    displayName: model.displayName,
    description: `Mock of ${model.displayName}`,
    inputTokenLimit: model.inputTokenLimit,
    outputTokenLimit: model.outputTokenLimit,
    supportedGenerationMethods:
      model.kind === 'embedding' ? ['embedContent', 'countTextTokens', 'countTokens'] : ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'],
    ...(model.kind === 'chat' ? { temperature: 1, topP: 0.95, topK: 64, maxTemperature: 2, thinking: model.thinking } : {}),
  };
}
