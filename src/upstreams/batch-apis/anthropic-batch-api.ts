import type { BatchApiTarget, ProviderBatchAnswer, ProviderBatchApi, UpstreamBatchState } from '../../domain/provider-batches.js';
import { batchApiCall, jsonLines } from './batch-api-call.js';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
const VERSION = '2023-06-01';
/** Pages of the provider's batch list read when searching for a batch submitted before a crash. */
const FIND_PAGES = 10;
/** Clock difference allowed between the gateway and the provider when comparing creation times. */
const FIND_SLACK_MS = 300_000;
/** The HTTP status each of Anthropic's error types is answered with. */
const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400, authentication_error: 401, billing_error: 402, permission_error: 403, not_found_error: 404,
  request_too_large: 413, rate_limit_error: 429, api_error: 500, timeout_error: 504, overloaded_error: 529,
};

interface MessageBatch {
  id: string;
  created_at: string;
  processing_status: 'in_progress' | 'canceling' | 'ended';
  cancel_initiated_at: string | null;
  results_url: string | null;
  request_counts: { processing: number; succeeded: number; errored: number; canceled: number; expired: number };
}

/** The API's root, with or without `/v1` in the channel's base URL. */
const root = (target: BatchApiTarget): string => `${(target.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '').replace(/\/v1$/, '')}/v1`;
function headers(target: BatchApiTarget): Record<string, string> {
  const named: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.headers)) named[name.toLowerCase()] = value;
  return { ...named, 'anthropic-version': named['anthropic-version'] ?? VERSION, 'content-type': 'application/json', 'x-api-key': target.apiKey };
}

async function retrieve(target: BatchApiTarget, batchId: string): Promise<MessageBatch> {
  return await (await batchApiCall(`${root(target)}/messages/batches/${encodeURIComponent(batchId)}`, { method: 'GET', headers: headers(target) })).json() as MessageBatch;
}

const totalOf = (batch: MessageBatch): number => Object.values(batch.request_counts).reduce((sum, count) => sum + count, 0);

/**
 * Anthropic's Message Batches: `POST /v1/messages/batches` with `requests: [{custom_id, params}]` (each request's
 * `custom_id` is the gateway batch's id and the line number, as Anthropic's `^[a-zA-Z0-9_-]{1,64}$` allows), polled by
 * `GET /v1/messages/batches/{id}` until `processing_status` is `ended`, its results read as JSONL from `results_url`.
 * `succeeded` and `errored` results are answers; `canceled` and `expired` ones were never run.
 */
export const anthropicBatchApi: ProviderBatchApi = {
  requestKey: (batchId, line) => `${batchId}-${line.line}`,

  // A Message Batch keeps no label: the batches created since the submit began with the batch's number of requests
  // are the candidates, the earliest first (each request's custom_id names the gateway batch, so answers of a batch
  // taken up by mistake match no line).
  async find(target, search) {
    const candidates: MessageBatch[] = [];
    let after: string | null = null;
    for (let page = 0; page < FIND_PAGES; page += 1) {
      const query: string = `limit=100${after === null ? '' : `&after_id=${encodeURIComponent(after)}`}`;
      const list = await (await batchApiCall(`${root(target)}/messages/batches?${query}`, { method: 'GET', headers: headers(target) })).json() as { data: MessageBatch[]; has_more: boolean; last_id: string | null };
      let older = false;
      for (const batch of list.data) {
        if (Date.parse(batch.created_at) < search.since - FIND_SLACK_MS) older = true;
        else if (totalOf(batch) === search.count) candidates.push(batch);
      }
      if (older || !list.has_more || list.last_id === null) break;
      after = list.last_id;
    }
    return candidates.sort((one, other) => Date.parse(one.created_at) - Date.parse(other.created_at)).map((batch) => batch.id);
  },

  async submit(target, _endpoint, requests) {
    const batch = await (await batchApiCall(`${root(target)}/messages/batches`, {
      method: 'POST', headers: headers(target), creation: true,
      body: JSON.stringify({ requests: requests.map((request) => ({ custom_id: request.customId, params: request.body })) }),
    })).json() as MessageBatch;
    return { batchId: batch.id, fileId: null };
  },

  async poll(target, batchId): Promise<UpstreamBatchState> {
    const batch = await retrieve(target, batchId);
    if (batch.processing_status !== 'ended') return { ended: false, status: batch.processing_status };
    const how = batch.cancel_initiated_at !== null ? 'cancelled' : batch.request_counts.expired > 0 ? 'expired' : 'completed';
    return { ended: true, status: how, how };
  },

  async cancel(target, batchId) {
    await batchApiCall(`${root(target)}/messages/batches/${encodeURIComponent(batchId)}/cancel`, { method: 'POST', headers: headers(target) });
  },

  async answers(target, batchId) {
    const batch = await retrieve(target, batchId);
    if (batch.results_url === null) return [];
    // The channel's key goes only to the channel's own origin: results served elsewhere are read at the batch's own
    // results path there instead.
    const own = new URL(root(target)).origin === new URL(batch.results_url, root(target)).origin;
    const url = own ? new URL(batch.results_url, root(target)).href : `${root(target)}/messages/batches/${encodeURIComponent(batchId)}/results`;
    const text = await (await batchApiCall(url, { method: 'GET', headers: headers(target) })).text();
    const answers: ProviderBatchAnswer[] = [];
    for (const line of jsonLines(text)) {
      const entry = line as { custom_id?: unknown; result?: { type?: unknown; message?: unknown; error?: { error?: { type?: unknown } } } };
      if (typeof entry.custom_id !== 'string' || entry.result === undefined) continue;
      if (entry.result.type === 'succeeded') answers.push({ customId: entry.custom_id, status: 200, body: entry.result.message ?? null });
      else if (entry.result.type === 'errored') {
        const type = typeof entry.result.error?.error?.type === 'string' ? entry.result.error.error.type : 'api_error';
        answers.push({ customId: entry.custom_id, status: ERROR_STATUS[type] ?? 500, body: entry.result.error ?? null });
      }
    }
    return answers;
  },
};
