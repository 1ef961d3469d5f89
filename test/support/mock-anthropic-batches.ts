/**
 * Anthropic's Message Batches API inside the mock Anthropic upstream, as api.anthropic.com speaks it:
 * `POST /v1/messages/batches` (`requests: [{custom_id, params}]`), `GET /v1/messages/batches[/{id}]` (newest first,
 * `limit`, `after_id`, `before_id`), `POST /v1/messages/batches/{id}/cancel`, `DELETE /v1/messages/batches/{id}`, and
 * `GET /v1/messages/batches/{id}/results` (JSONL, at the batch's `results_url` once it has ended). A batch runs its
 * requests one after the other through the mock's own `POST /v1/messages` over HTTP; each result is `succeeded`
 * (the message), `errored` (Anthropic's error response), `canceled` (cancelled before it ran) or `expired`.
 */
import { randomBytes } from 'node:crypto';
import { MockAnthropicError, invalidRequest } from './mock-anthropic-upstream-wire.js';

export interface MockMessageBatch {
  id: string;
  type: 'message_batch';
  processing_status: 'in_progress' | 'canceling' | 'ended';
  request_counts: { processing: number; succeeded: number; errored: number; canceled: number; expired: number };
  ended_at: string | null;
  created_at: string;
  expires_at: string;
  archived_at: string | null;
  cancel_initiated_at: string | null;
  results_url: string | null;
}

export interface MockAnthropicBatchesOptions {
  origin: () => string;
  apiKey: string;
  /** Pause before each request runs (default 0), so a test can cancel a batch mid-way. */
  lineDelayMs?: number;
  /** Pause after a batch is created before the creation is answered (default 0): a caller can be stopped in between. */
  createHoldMs?: number;
}

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_REQUESTS = 100_000;
const iso = (ms: number): string => new Date(ms).toISOString();
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The Message Batches API's state and handlers of one mock upstream. */
export class MockAnthropicBatches {
  readonly batches = new Map<string, MockMessageBatch>();
  /** Each batch's requests as received, and its result lines in request order. */
  readonly requests = new Map<string, Array<{ custom_id: string; params: Record<string, unknown> }>>();
  readonly results = new Map<string, string[]>();
  #closing = false;

  constructor(private readonly options: MockAnthropicBatchesOptions) {}

  static serves(path: string): boolean {
    return path === '/v1/messages/batches' || path.startsWith('/v1/messages/batches/');
  }

  /** The answer to a Message Batches call: JSON, or JSONL text for results. */
  async answer(method: string, path: string, params: URLSearchParams, body: unknown): Promise<{ status: number; body: unknown; jsonl?: string }> {
    if (method === 'POST' && path === '/v1/messages/batches') {
      const batch = this.#create(body);
      if ((this.options.createHoldMs ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, this.options.createHoldMs));
      return { status: 200, body: batch };
    }
    if (method === 'GET' && path === '/v1/messages/batches') return { status: 200, body: this.#list(params) };
    const match = /^\/v1\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/.exec(path);
    const id = match === null ? '' : decodeURIComponent(match[1] as string);
    const batch = this.batches.get(id);
    if (match === null) throw new MockAnthropicError(404, 'not_found_error', `Not Found: ${method} ${path}`);
    if (batch === undefined) throw new MockAnthropicError(404, 'not_found_error', `message_batch: ${id}`);
    if (method === 'GET' && match[2] === undefined) return { status: 200, body: batch };
    if (method === 'GET' && match[2] === '/results') {
      if (batch.processing_status !== 'ended') throw new MockAnthropicError(404, 'not_found_error', `Results for message batch ${id} are not available until processing ends.`);
      return { status: 200, body: null, jsonl: `${(this.results.get(id) ?? []).join('\n')}\n` };
    }
    if (method === 'POST' && match[2] === '/cancel') {
      if (batch.processing_status === 'ended') throw invalidRequest(`Batch ${id} has already ended and cannot be canceled.`);
      if (batch.processing_status === 'in_progress') {
        batch.processing_status = 'canceling';
        batch.cancel_initiated_at = iso(Date.now());
      }
      return { status: 200, body: batch };
    }
    if (method === 'DELETE' && match[2] === undefined) {
      if (batch.processing_status !== 'ended') throw invalidRequest(`Batch ${id} is still processing; cancel it first.`);
      this.batches.delete(id);
      return { status: 200, body: { id, type: 'message_batch_deleted' } };
    }
    throw new MockAnthropicError(404, 'not_found_error', `Not Found: ${method} ${path}`);
  }

  close(): void {
    this.#closing = true;
  }

  #list(params: URLSearchParams): Record<string, unknown> {
    const limit = Number(params.get('limit') ?? 20);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalidRequest('limit: Input should be less than or equal to 1000');
    let list = [...this.batches.values()].reverse();
    const after = params.get('after_id');
    const before = params.get('before_id');
    if (after !== null) list = list.slice(list.findIndex((batch) => batch.id === after) + 1);
    if (before !== null) list = list.slice(0, Math.max(0, list.findIndex((batch) => batch.id === before)));
    const page = before === null ? list.slice(0, limit) : list.slice(Math.max(0, list.length - limit));
    return { data: page, has_more: list.length > page.length, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
  }

  #create(body: unknown): MockMessageBatch {
    if (!isObject(body)) throw invalidRequest('requests: Field required');
    const { requests } = body;
    if (!Array.isArray(requests) || requests.length === 0) throw invalidRequest('requests: List should have at least 1 item after validation, not 0');
    if (requests.length > MAX_REQUESTS) throw invalidRequest(`requests: List should have at most ${MAX_REQUESTS} items`);
    const seen = new Set<string>();
    const accepted: Array<{ custom_id: string; params: Record<string, unknown> }> = [];
    for (const [index, item] of requests.entries()) {
      if (!isObject(item) || typeof item.custom_id !== 'string' || !CUSTOM_ID.test(item.custom_id)) throw invalidRequest(`requests.${index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
      if (seen.has(item.custom_id)) throw invalidRequest(`Duplicate custom_id: ${item.custom_id}`);
      seen.add(item.custom_id);
      const { params } = item;
      if (!isObject(params)) throw invalidRequest(`requests.${index}.params: Field required`);
      if (typeof params.model !== 'string' || typeof params.max_tokens !== 'number' || !Array.isArray(params.messages)) throw invalidRequest(`requests.${index}.params: model, max_tokens and messages are required`);
      if (params.stream === true) throw invalidRequest(`requests.${index}.params.stream: streaming is not supported in batches`);
      accepted.push({ custom_id: item.custom_id, params });
    }
    const now = Date.now();
    const batch: MockMessageBatch = {
      id: `msgbatch_${randomBytes(12).toString('hex')}`, type: 'message_batch', processing_status: 'in_progress',
      request_counts: { processing: accepted.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      ended_at: null, created_at: iso(now), expires_at: iso(now + 86_400_000), archived_at: null, cancel_initiated_at: null, results_url: null,
    };
    this.batches.set(batch.id, batch);
    this.requests.set(batch.id, accepted);
    this.results.set(batch.id, []);
    setImmediate(() => void this.#run(batch, accepted));
    return batch;
  }

  async #run(batch: MockMessageBatch, requests: Array<{ custom_id: string; params: Record<string, unknown> }>): Promise<void> {
    const results = this.results.get(batch.id) as string[];
    for (const request of requests) {
      if ((this.options.lineDelayMs ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, this.options.lineDelayMs));
      batch.request_counts.processing -= 1;
      if (batch.processing_status === 'canceling' || this.#closing) {
        batch.request_counts.canceled += 1;
        results.push(JSON.stringify({ custom_id: request.custom_id, result: { type: 'canceled' } }));
        continue;
      }
      const response = await fetch(`${this.options.origin()}/v1/messages`, {
        method: 'POST', headers: { 'x-api-key': this.options.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify(request.params),
      }).catch(() => null);
      const answer = response === null ? null : await response.json().catch(() => null) as Record<string, unknown> | null;
      if (response !== null && response.ok && answer !== null) {
        batch.request_counts.succeeded += 1;
        results.push(JSON.stringify({ custom_id: request.custom_id, result: { type: 'succeeded', message: answer } }));
      } else {
        batch.request_counts.errored += 1;
        const error = answer !== null && isObject(answer.error) ? answer : { type: 'error', error: { type: 'api_error', message: 'Internal server error' } };
        results.push(JSON.stringify({ custom_id: request.custom_id, result: { type: 'errored', error: { ...error, request_id: response?.headers.get('request-id') ?? null } } }));
      }
    }
    batch.processing_status = 'ended';
    batch.ended_at = iso(Date.now());
    batch.results_url = `${this.options.origin()}/v1/messages/batches/${batch.id}/results`;
  }
}
