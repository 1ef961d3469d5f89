import type { BatchApiTarget, ProviderBatchAnswer, ProviderBatchApi, UpstreamBatchState } from '../../domain/provider-batches.js';
import { batchApiCall, jsonLines } from './batch-api-call.js';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
/** Pages of the provider's batch list read when searching for a batch submitted before a crash. */
const FIND_PAGES = 10;
/** Clock difference allowed between the gateway and the provider when comparing creation times. */
const FIND_SLACK_SECONDS = 300;
const ENDED: Record<string, 'completed' | 'cancelled' | 'expired' | 'failed'> = { completed: 'completed', cancelled: 'cancelled', expired: 'expired', failed: 'failed' };

const base = (target: BatchApiTarget): string => (target.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
const headers = (target: BatchApiTarget, json = true): Record<string, string> => ({
  ...target.headers, authorization: `Bearer ${target.apiKey}`, ...(json ? { 'content-type': 'application/json' } : {}),
});

/**
 * OpenAI's Files and Batch APIs: the input uploaded as a `batch` file (one JSON line a request), the batch created
 * on it (24h window), polled by `GET /batches/{id}`, its answers read from its output and error files.
 */
export const openAIBatchApi: ProviderBatchApi = {
  requestKey: (_batchId, line) => line.customId,

  // The batch carries its gateway batch's id in its metadata: the newest pages are read back to when the submit began.
  async find(target, search) {
    const since = Math.floor(search.since / 1000) - FIND_SLACK_SECONDS;
    let after: string | null = null;
    for (let page = 0; page < FIND_PAGES; page += 1) {
      const query: string = `limit=100${after === null ? '' : `&after=${encodeURIComponent(after)}`}`;
      const list = await (await batchApiCall(`${base(target)}/batches?${query}`, { method: 'GET', headers: headers(target) })).json() as { data: Array<{ id: string; created_at: number; metadata?: Record<string, string> | null }>; has_more?: boolean };
      const found = list.data.find((batch) => batch.metadata?.unigate_batch === search.label);
      if (found !== undefined) return [found.id];
      const last = list.data.at(-1);
      if (list.has_more !== true || last === undefined || last.created_at < since) return [];
      after = last.id;
    }
    return [];
  },

  async submit(target, endpoint, requests, label) {
    const text = requests.map((request) => `${JSON.stringify({ custom_id: request.customId, method: 'POST', url: endpoint, body: request.body })}\n`).join('');
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([text], { type: 'application/jsonl' }), `${label}.jsonl`);
    const file = await (await batchApiCall(`${base(target)}/files`, { method: 'POST', headers: headers(target, false), body: form, creation: true })).json() as { id: string };
    const batch = await (await batchApiCall(`${base(target)}/batches`, {
      method: 'POST', headers: headers(target), creation: true,
      body: JSON.stringify({ input_file_id: file.id, endpoint, completion_window: '24h', metadata: { unigate_batch: label } }),
    })).json() as { id: string };
    return { batchId: batch.id, fileId: file.id };
  },

  async poll(target, batchId): Promise<UpstreamBatchState> {
    const batch = await (await batchApiCall(`${base(target)}/batches/${encodeURIComponent(batchId)}`, { method: 'GET', headers: headers(target) })).json() as { status: string };
    const how = ENDED[batch.status];
    return how === undefined ? { ended: false, status: batch.status } : { ended: true, status: batch.status, how };
  },

  async cancel(target, batchId) {
    await batchApiCall(`${base(target)}/batches/${encodeURIComponent(batchId)}/cancel`, { method: 'POST', headers: headers(target) }).catch((error: unknown) => {
      // An upstream batch that ended meanwhile cannot be cancelled (409): its answers are collected as they are.
      if (!(error instanceof Error && / answered 409/.test(error.message))) throw error;
    });
  },

  async answers(target, batchId) {
    const batch = await (await batchApiCall(`${base(target)}/batches/${encodeURIComponent(batchId)}`, { method: 'GET', headers: headers(target) })).json() as { output_file_id?: string | null; error_file_id?: string | null };
    const answers: ProviderBatchAnswer[] = [];
    for (const fileId of [batch.output_file_id, batch.error_file_id]) {
      if (typeof fileId !== 'string' || fileId === '') continue;
      const text = await (await batchApiCall(`${base(target)}/files/${encodeURIComponent(fileId)}/content`, { method: 'GET', headers: headers(target, false) })).text();
      for (const line of jsonLines(text)) {
        const entry = line as { custom_id?: unknown; response?: { status_code?: unknown; body?: unknown } | null };
        // A line with no response was never run (cancelled or expired): it is not an answer.
        if (typeof entry.custom_id !== 'string' || entry.response === null || entry.response === undefined || typeof entry.response.status_code !== 'number') continue;
        answers.push({ customId: entry.custom_id, status: entry.response.status_code, body: entry.response.body ?? null });
      }
    }
    return answers;
  },
};
