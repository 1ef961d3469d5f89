import type { BatchLineInput } from '../domain/batches.js';
import { bareModelName } from '../wire/gemini/gemini-wire.js';

/** Longest `displayName` kept. */
const DISPLAY_NAME_MAX = 512;
/** Longest request `metadata` kept, as JSON text. */
const METADATA_MAX_CHARS = 4096;

export type GeminiBatchInput =
  | { ok: true; displayName: string | null; lines: BatchLineInput[] }
  | { ok: false; message: string; param: string };

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The body of `models/{model}:batchGenerateContent`: `{batch: {displayName?, inputConfig: {requests: {requests:
 * [{request, metadata?}]}}}}`, a non-empty list of at most `maxLines` inlined `GenerateContentRequest`s. Each becomes
 * a line numbered from 1 whose body is the request with its `model` (the one the request names, else the batch's
 * `model`, without `models/`), and whose `customId` keeps the request's `metadata` as JSON text ('' when none), to be
 * handed back with its answer. Either every request is good or the first problem, named by its field path.
 */
export function parseGeminiBatch(body: Record<string, unknown>, batchModel: string, maxLines: number): GeminiBatchInput {
  const fail = (param: string, message: string): GeminiBatchInput => ({ ok: false, message: `${param}: ${message}`, param });
  const { batch } = body;
  if (!isObject(batch)) return fail('batch', 'must be an object with \'inputConfig\'.');
  const { displayName, inputConfig } = batch;
  if (displayName !== undefined && displayName !== null && (typeof displayName !== 'string' || displayName.length > DISPLAY_NAME_MAX)) {
    return fail('batch.displayName', `must be a string of at most ${DISPLAY_NAME_MAX} characters.`);
  }
  if (!isObject(inputConfig)) return fail('batch.inputConfig', 'must be an object with inlined \'requests\'.');
  if (inputConfig.fileName !== undefined && inputConfig.fileName !== null) {
    return fail('batch.inputConfig.fileName', 'must be read with the file\'s lines (parseGeminiBatchFile).');
  }
  const wrapper = inputConfig.requests;
  const requests = isObject(wrapper) ? wrapper.requests : undefined;
  if (!Array.isArray(requests) || requests.length === 0) return fail('batch.inputConfig.requests.requests', 'must be a non-empty array of requests.');
  if (requests.length > maxLines) return fail('batch.inputConfig.requests.requests', `a batch takes at most ${maxLines} requests.`);
  const lines: BatchLineInput[] = [];
  for (const [index, item] of requests.entries()) {
    const at = `batch.inputConfig.requests.requests[${index}]`;
    if (!isObject(item)) return fail(at, 'must be an object with \'request\'.');
    const { request, metadata } = item;
    if (!isObject(request)) return fail(`${at}.request`, 'must be a GenerateContentRequest object.');
    if (!Array.isArray(request.contents) || request.contents.length === 0) return fail(`${at}.request.contents`, 'must be a non-empty array of Content.');
    if (request.model !== undefined && (typeof request.model !== 'string' || bareModelName(request.model).trim() === '')) return fail(`${at}.request.model`, 'must be a model name.');
    if (metadata !== undefined && metadata !== null && !isObject(metadata)) return fail(`${at}.metadata`, 'must be an object.');
    const kept = isObject(metadata) ? JSON.stringify(metadata) : '';
    if (kept.length > METADATA_MAX_CHARS) return fail(`${at}.metadata`, `must be at most ${METADATA_MAX_CHARS} characters as JSON.`);
    const model = typeof request.model === 'string' ? bareModelName(request.model).trim() : batchModel;
    lines.push({ line: index + 1, customId: kept, body: JSON.stringify({ ...request, model }) });
  }
  return { ok: true, displayName: typeof displayName === 'string' ? displayName : null, lines };
}

/** `batch.inputConfig.fileName` (`files/{id}`) when the batch's requests are in an uploaded file; null otherwise. */
export function geminiBatchFileName(body: Record<string, unknown>): { fileName: string; displayName: string | null } | null {
  const { batch } = body;
  if (!isObject(batch) || !isObject(batch.inputConfig)) return null;
  const { fileName } = batch.inputConfig;
  if (typeof fileName !== 'string' || fileName === '') return null;
  const displayName = typeof batch.displayName === 'string' ? batch.displayName.slice(0, DISPLAY_NAME_MAX) : null;
  return { fileName, displayName };
}

/** Longest `key` of a line of an input file. */
const KEY_MAX = 256;

/**
 * An input file of Gemini's batch mode: JSON Lines, each `{"key"?: string, "request": GenerateContentRequest}`. Each
 * becomes a line numbered from 1 whose `customId` is the key ('' when none), handed back with its answer in the
 * results file. Either every line is good or the first problem, named by its line.
 */
export function parseGeminiBatchFile(text: string, batchModel: string, maxLines: number): GeminiBatchInput {
  const fail = (line: number, message: string): GeminiBatchInput => ({ ok: false, message: `batch.inputConfig.fileName: line ${line}: ${message}`, param: 'batch.inputConfig.fileName' });
  const rows = text.split('\n').map((row) => row.trim());
  while (rows.length > 0 && rows.at(-1) === '') rows.pop();
  if (rows.length === 0) return fail(1, 'the file has no requests.');
  if (rows.length > maxLines) return fail(maxLines + 1, `a batch takes at most ${maxLines} requests.`);
  const lines: BatchLineInput[] = [];
  for (const [index, row] of rows.entries()) {
    let item: unknown;
    try {
      item = JSON.parse(row);
    } catch {
      return fail(index + 1, 'is not valid JSON.');
    }
    if (!isObject(item)) return fail(index + 1, 'must be an object with \'request\'.');
    const { key, request } = item;
    if (key !== undefined && (typeof key !== 'string' || key.length > KEY_MAX)) return fail(index + 1, `'key' must be a string of at most ${KEY_MAX} characters.`);
    if (!isObject(request)) return fail(index + 1, '\'request\' must be a GenerateContentRequest object.');
    if (!Array.isArray(request.contents) || request.contents.length === 0) return fail(index + 1, '\'request.contents\' must be a non-empty array of Content.');
    if (request.model !== undefined && (typeof request.model !== 'string' || bareModelName(request.model).trim() === '')) return fail(index + 1, '\'request.model\' must be a model name.');
    const model = typeof request.model === 'string' ? bareModelName(request.model).trim() : batchModel;
    lines.push({ line: index + 1, customId: typeof key === 'string' ? key : '', body: JSON.stringify({ ...request, model }) });
  }
  return { ok: true, displayName: null, lines };
}
