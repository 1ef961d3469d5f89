import type { BatchApiTarget, ProviderBatchAnswer, ProviderBatchApi, UpstreamBatchState } from '../../domain/provider-batches.js';
import { batchApiCall } from './batch-api-call.js';

const DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';
const DEFAULT_VERSION = 'v1beta';
/** Pages of the provider's batch list read when searching for a batch submitted before a crash. */
const FIND_PAGES = 10;
/** The display name the provider's batch carries: the gateway batch's id, so it is found again after a crash. */
const LABEL_PREFIX = 'unigate:';
const ENDED: Record<string, 'completed' | 'cancelled' | 'expired' | 'failed'> = {
  BATCH_STATE_SUCCEEDED: 'completed', BATCH_STATE_CANCELLED: 'cancelled', BATCH_STATE_EXPIRED: 'expired', BATCH_STATE_FAILED: 'failed',
};
/** The HTTP status of each google.rpc.Code a failed request's `Status` carries. */
const HTTP_OF_RPC: Record<number, number> = { 1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401 };

interface BatchOperation {
  name: string;
  done?: boolean;
  metadata?: {
    displayName?: string;
    state?: string;
    output?: { inlinedResponses?: { inlinedResponses?: Array<{ metadata?: { key?: unknown }; response?: unknown; error?: { code?: number; message?: string; status?: string } }> } };
  };
}

/** `{base}/{version}`: the version is the channel base's own when it ends in one, else v1beta. */
const root = (target: BatchApiTarget): string => {
  const base = (target.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  return /\/v\d+(?:alpha|beta)?\d*$/.test(base) ? base : `${base}/${DEFAULT_VERSION}`;
};
const headers = (target: BatchApiTarget): Record<string, string> => ({ ...target.headers, 'content-type': 'application/json', 'x-goog-api-key': target.apiKey });
/** An upstream batch's resource path (`batches/{id}`), each segment escaped. */
const resource = (name: string): string => name.split('/').map(encodeURIComponent).join('/');

async function retrieve(target: BatchApiTarget, name: string): Promise<BatchOperation> {
  return await (await batchApiCall(`${root(target)}/${resource(name)}`, { method: 'GET', headers: headers(target) })).json() as BatchOperation;
}

/**
 * Gemini's batch mode: `POST models/{model}:batchGenerateContent` with the requests inlined (each with `metadata.key`,
 * the line number, handed back with its answer) and the gateway batch's id as `displayName`; the operation
 * `batches/{id}` polled until its `state` has ended; each `inlinedResponses` entry a `response` or a failed request's
 * `error` (a google.rpc.Status, answered as Google's error envelope); `batches/{id}:cancel` to cancel.
 */
export const geminiBatchApi: ProviderBatchApi = {
  requestKey: (_batchId, line) => String(line.line),

  async find(target, search) {
    let token: string | null = null;
    for (let page = 0; page < FIND_PAGES; page += 1) {
      const query: string = `pageSize=100${token === null ? '' : `&pageToken=${encodeURIComponent(token)}`}`;
      const list = await (await batchApiCall(`${root(target)}/batches?${query}`, { method: 'GET', headers: headers(target) })).json() as { operations?: BatchOperation[]; nextPageToken?: string };
      const found = (list.operations ?? []).find((operation) => operation.metadata?.displayName === `${LABEL_PREFIX}${search.label}`);
      if (found !== undefined) return [found.name];
      if (list.nextPageToken === undefined || list.nextPageToken === '') return [];
      token = list.nextPageToken;
    }
    return [];
  },

  async submit(target, _endpoint, requests, label) {
    const model = String(requests[0]?.body.model ?? '').replace(/^models\//, '');
    const inlined = requests.map((request) => {
      const { model: _model, ...body } = request.body;
      return { request: body, metadata: { key: request.customId } };
    });
    const operation = await (await batchApiCall(`${root(target)}/models/${encodeURIComponent(model)}:batchGenerateContent`, {
      method: 'POST', headers: headers(target), creation: true,
      body: JSON.stringify({ batch: { displayName: `${LABEL_PREFIX}${label}`, inputConfig: { requests: { requests: inlined } } } }),
    })).json() as BatchOperation;
    return { batchId: operation.name, fileId: null };
  },

  async poll(target, name): Promise<UpstreamBatchState> {
    const state = (await retrieve(target, name)).metadata?.state ?? 'BATCH_STATE_PENDING';
    const how = ENDED[state];
    return how === undefined ? { ended: false, status: state } : { ended: true, status: how, how };
  },

  async cancel(target, name) {
    await batchApiCall(`${root(target)}/${resource(name)}:cancel`, { method: 'POST', headers: headers(target), body: '{}' }).catch((error: unknown) => {
      // A batch that ended meanwhile cannot be cancelled: its answers are collected as they are.
      if (!(error instanceof Error && / answered (400|409)/.test(error.message))) throw error;
    });
  },

  async answers(target, name) {
    const operation = await retrieve(target, name);
    const answers: ProviderBatchAnswer[] = [];
    for (const entry of operation.metadata?.output?.inlinedResponses?.inlinedResponses ?? []) {
      const key = entry.metadata?.key;
      if (typeof key !== 'string') continue;
      if (entry.response !== undefined) answers.push({ customId: key, status: 200, body: entry.response });
      else if (entry.error !== undefined) {
        // Requests the provider never ran (the batch cancelled or expired first) are not answers.
        if (entry.error.code === 1 || entry.error.code === 4) continue;
        const status = HTTP_OF_RPC[entry.error.code ?? 2] ?? 500;
        answers.push({ customId: key, status, body: { error: { code: status, message: entry.error.message ?? 'The request failed.', status: entry.error.status ?? 'UNKNOWN' } } });
      }
    }
    return answers;
  },
};
