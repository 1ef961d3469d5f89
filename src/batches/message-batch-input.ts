import type { BatchLineInput } from '../domain/batches.js';

/** A Message Batch request's `custom_id`: 1 to 64 letters, digits, `-` and `_`, as Anthropic takes it. */
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

export type MessageBatchInput =
  | { ok: true; lines: BatchLineInput[] }
  | { ok: false; message: string; param: string };

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The `requests` of a Message Batch create: a non-empty array of at most `maxLines` objects, each with its own
 * `custom_id` and `params` (a Messages request naming its `model`, with `max_tokens` and `messages`, not streamed).
 * Either every request is good (as lines numbered from 1, each body the request's `params`) or the first problem,
 * named by its path as Anthropic names it (`requests.3.custom_id`).
 */
export function parseMessageBatchRequests(requests: unknown, maxLines: number): MessageBatchInput {
  if (!Array.isArray(requests) || requests.length === 0) return { ok: false, message: 'requests: must be a non-empty array of requests.', param: 'requests' };
  if (requests.length > maxLines) return { ok: false, message: `requests: a batch takes at most ${maxLines} requests.`, param: 'requests' };
  const lines: BatchLineInput[] = [];
  const seen = new Set<string>();
  for (const [index, request] of requests.entries()) {
    const at = `requests.${index}`;
    const fail = (field: string, message: string): MessageBatchInput => ({ ok: false, message: `${at}${field}: ${message}`, param: `${at}${field}` });
    if (!isObject(request)) return fail('', 'must be an object with \'custom_id\' and \'params\'.');
    const { custom_id: customId, params } = request;
    if (typeof customId !== 'string' || !CUSTOM_ID.test(customId)) return fail('.custom_id', 'must be 1 to 64 letters, digits, hyphens or underscores.');
    if (seen.has(customId)) return fail('.custom_id', `'${customId}' is used by an earlier request; each request needs its own.`);
    if (!isObject(params)) return fail('.params', 'must be an object (the Messages request).');
    if (typeof params.model !== 'string' || params.model === '') return fail('.params.model', 'Field required.');
    if (typeof params.max_tokens !== 'number' || !Number.isInteger(params.max_tokens) || params.max_tokens < 1) return fail('.params.max_tokens', 'must be a positive integer.');
    if (!Array.isArray(params.messages)) return fail('.params.messages', 'Field required.');
    if (params.stream === true) return fail('.params.stream', 'batch requests cannot stream.');
    seen.add(customId);
    lines.push({ line: index + 1, customId, body: JSON.stringify(params) });
  }
  return { ok: true, lines };
}
