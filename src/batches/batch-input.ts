import type { BatchEndpoint, BatchInputError, BatchLineInput } from '../domain/batches.js';

/** Longest `custom_id` kept (OpenAI allows 64 characters; other clients send UUIDs and paths). */
export const CUSTOM_ID_MAX_LENGTH = 512;

export type BatchInput =
  | { ok: true; lines: BatchLineInput[]; models: string[] }
  | { ok: false; errors: BatchInputError[] };

/** At most this many errors are reported for one file (the first ones, by line). */
const MAX_REPORTED_ERRORS = 100;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A batch input file: one JSON object a line (`custom_id`, `method` POST, `url` the batch's endpoint, `body` an object
 * naming its `model`), blank lines skipped, `custom_id`s unique. Either every line is good (with the models the
 * lines name) or the file's errors, numbered from line 1, as OpenAI reports them.
 */
export function parseBatchInput(text: string, endpoint: BatchEndpoint, maxLines: number): BatchInput {
  const errors: BatchInputError[] = [];
  const lines: BatchLineInput[] = [];
  const seen = new Set<string>();
  const models = new Set<string>();
  const fail = (line: number, code: string, message: string, param: string | null = null): void => {
    if (errors.length < MAX_REPORTED_ERRORS) errors.push({ code, message, line, param });
  };
  const rows = text.split('\n');
  for (let index = 0; index < rows.length; index += 1) {
    const raw = (rows[index] as string).trim();
    if (raw === '') continue;
    const line = index + 1;
    if (lines.length + errors.length >= maxLines) {
      return { ok: false, errors: [{ code: 'too_many_requests', message: `A batch takes at most ${maxLines} requests.`, line: null, param: null }] };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      fail(line, 'invalid_json_line', 'This line is not valid JSON.');
      continue;
    }
    if (!isObject(parsed)) {
      fail(line, 'invalid_request', 'Each line must be a JSON object.');
      continue;
    }
    const { custom_id: customId, method, url, body } = parsed;
    if (typeof customId !== 'string' || customId === '' || customId.length > CUSTOM_ID_MAX_LENGTH) {
      fail(line, 'invalid_request', `'custom_id' must be a string of 1 to ${CUSTOM_ID_MAX_LENGTH} characters.`, 'custom_id');
      continue;
    }
    if (seen.has(customId)) {
      fail(line, 'duplicate_custom_id', `The custom_id '${customId}' is used by an earlier line; each line needs its own.`, 'custom_id');
      continue;
    }
    if (method !== 'POST') {
      fail(line, 'invalid_method', '\'method\' must be \'POST\'.', 'method');
      continue;
    }
    if (url !== endpoint) {
      fail(line, 'mismatched_endpoint', `'url' must be the batch's endpoint, '${endpoint}'.`, 'url');
      continue;
    }
    if (!isObject(body)) {
      fail(line, 'invalid_request', '\'body\' must be a JSON object.', 'body');
      continue;
    }
    if (typeof body.model !== 'string' || body.model === '') {
      fail(line, 'missing_required_parameter', '\'body.model\' is required.', 'body.model');
      continue;
    }
    if (body.stream === true) {
      fail(line, 'invalid_request', 'Batch lines cannot stream: remove \'body.stream\'.', 'body.stream');
      continue;
    }
    seen.add(customId);
    models.add(body.model);
    lines.push({ line, customId, body: JSON.stringify(body) });
  }
  if (errors.length > 0) return { ok: false, errors };
  if (lines.length === 0) return { ok: false, errors: [{ code: 'empty_file', message: 'The input file has no requests.', line: null, param: null }] };
  return { ok: true, lines, models: [...models] };
}
