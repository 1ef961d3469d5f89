/**
 * Gemini's batch mode inside the mock Gemini upstream, as generativelanguage.googleapis.com speaks it:
 * `POST /v1beta/models/{model}:batchGenerateContent` (`{batch: {displayName?, inputConfig: {requests: {requests:
 * [{request, metadata?}]}}}}`) answers the batch's long-running operation; `GET /v1beta/batches[/{id}]` (`pageSize`,
 * `pageToken`), `POST /v1beta/batches/{id}:cancel` (answers `{}`), `DELETE /v1beta/batches/{id}`. A batch runs its
 * requests one after the other through the mock's own `generateContent` over HTTP; once ended its operation carries
 * `metadata.output.inlinedResponses.inlinedResponses` in request order (each `response` or `error`, with the
 * request's `metadata`), and `response` (succeeded) or `error` (cancelled).
 */
import { randomBytes } from 'node:crypto';
import { googleError, invalid } from './mock-gemini-upstream-wire.js';

type State = 'BATCH_STATE_PENDING' | 'BATCH_STATE_RUNNING' | 'BATCH_STATE_SUCCEEDED' | 'BATCH_STATE_FAILED' | 'BATCH_STATE_CANCELLED' | 'BATCH_STATE_EXPIRED';

export interface MockGeminiBatch {
  name: string;
  model: string;
  displayName: string | null;
  state: State;
  createTime: string;
  updateTime: string;
  endTime: string | null;
  requests: Array<{ request: Record<string, unknown>; metadata?: Record<string, unknown> }>;
  responses: Array<Record<string, unknown>>;
  cancelled: boolean;
}

export interface MockGeminiBatchesOptions {
  origin: () => string;
  apiKey: string;
  lineDelayMs?: number;
  /** Pause after a batch is created before the creation is answered (default 0). */
  createHoldMs?: number;
}

const BATCH_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch';
const OUTPUT_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput';
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const ENDED: readonly State[] = ['BATCH_STATE_SUCCEEDED', 'BATCH_STATE_FAILED', 'BATCH_STATE_CANCELLED', 'BATCH_STATE_EXPIRED'];

export class MockGeminiBatches {
  readonly batches = new Map<string, MockGeminiBatch>();
  #closing = false;

  constructor(private readonly options: MockGeminiBatchesOptions) {}

  static serves(path: string): boolean {
    return /^\/(v1beta|v1|v1alpha)\/batches(\/|$)/.test(path);
  }

  async create(model: string, body: unknown): Promise<Record<string, unknown>> {
    if (!isObject(body) || !isObject(body.batch)) throw invalid('* BatchGenerateContentRequest.batch: batch is required.\n');
    const { displayName, inputConfig } = body.batch;
    if (!isObject(inputConfig)) throw invalid('* BatchGenerateContentRequest.batch.input_config: input_config is required.\n');
    if (inputConfig.fileName !== undefined) throw invalid('* The mock takes inlined requests only.\n');
    const list = isObject(inputConfig.requests) ? inputConfig.requests.requests : undefined;
    if (!Array.isArray(list) || list.length === 0) throw invalid('* BatchGenerateContentRequest.batch.input_config.requests.requests: requests must not be empty.\n');
    const requests: MockGeminiBatch['requests'] = [];
    for (const [index, item] of list.entries()) {
      if (!isObject(item) || !isObject(item.request) || !Array.isArray(item.request.contents)) throw invalid(`* requests[${index}].request: a GenerateContentRequest with contents is required.\n`);
      requests.push({ request: item.request, ...(isObject(item.metadata) ? { metadata: item.metadata } : {}) });
    }
    const now = new Date().toISOString();
    const batch: MockGeminiBatch = {
      name: `batches/${randomBytes(12).toString('hex')}`, model: `models/${model}`, displayName: typeof displayName === 'string' ? displayName : null,
      state: 'BATCH_STATE_PENDING', createTime: now, updateTime: now, endTime: null, requests, responses: [], cancelled: false,
    };
    this.batches.set(batch.name, batch);
    setImmediate(() => void this.#run(batch));
    if ((this.options.createHoldMs ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, this.options.createHoldMs));
    return this.operation(batch, false);
  }

  answer(method: string, path: string, params: URLSearchParams): Record<string, unknown> {
    const match = /^\/(?:v1beta|v1|v1alpha)\/(batches(?:\/([^/:]+))?)(:cancel)?$/.exec(path);
    if (match === null) throw googleError(404, `The requested URL ${path} was not found on this server.`);
    if (match[2] === undefined) {
      if (method !== 'GET') throw googleError(404, 'Method not found.');
      const size = Math.min(Number(params.get('pageSize') ?? '50') || 50, 1000);
      const all = [...this.batches.values()].reverse();
      const offset = params.has('pageToken') ? Number(Buffer.from(params.get('pageToken') ?? '', 'base64url').toString()) : 0;
      const page = all.slice(offset, offset + size);
      return { operations: page.map((batch) => this.operation(batch, false)), ...(offset + size < all.length ? { nextPageToken: Buffer.from(String(offset + size)).toString('base64url') } : {}) };
    }
    const name = `batches/${decodeURIComponent(match[2])}`;
    const batch = this.batches.get(name);
    if (batch === undefined) throw googleError(404, `Batch '${name}' was not found.`);
    if (method === 'GET' && match[3] === undefined) return this.operation(batch, true);
    if (method === 'POST' && match[3] === ':cancel') {
      if (!ENDED.includes(batch.state)) batch.cancelled = true;
      return {};
    }
    if (method === 'DELETE' && match[3] === undefined) {
      this.batches.delete(name);
      return {};
    }
    throw googleError(404, 'Method not found.');
  }

  close(): void {
    this.#closing = true;
  }

  operation(batch: MockGeminiBatch, withOutput: boolean): Record<string, unknown> {
    const done = ENDED.includes(batch.state);
    const succeeded = batch.responses.filter((entry) => entry.response !== undefined).length;
    const output = done ? { inlinedResponses: { inlinedResponses: batch.responses } } : undefined;
    const metadata = {
      '@type': BATCH_TYPE, model: batch.model, ...(batch.displayName === null ? {} : { displayName: batch.displayName }),
      ...(output !== undefined && withOutput ? { output } : {}),
      createTime: batch.createTime, ...(batch.endTime === null ? {} : { endTime: batch.endTime }), updateTime: batch.updateTime,
      batchStats: { requestCount: String(batch.requests.length), ...(succeeded > 0 ? { successfulRequestCount: String(succeeded) } : {}), ...(batch.responses.length - succeeded > 0 ? { failedRequestCount: String(batch.responses.length - succeeded) } : {}), ...(done ? {} : { pendingRequestCount: String(batch.requests.length - batch.responses.length) }) },
      state: batch.state, name: batch.name,
    };
    return {
      name: batch.name, metadata,
      ...(done ? { done: true } : {}),
      ...(done && batch.state === 'BATCH_STATE_CANCELLED' ? { error: { code: 1, message: 'The batch was cancelled.' } } : {}),
      ...(done && batch.state === 'BATCH_STATE_SUCCEEDED' && withOutput ? { response: { '@type': OUTPUT_TYPE, ...output } } : {}),
    };
  }

  async #run(batch: MockGeminiBatch): Promise<void> {
    for (const item of batch.requests) {
      if ((this.options.lineDelayMs ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, this.options.lineDelayMs));
      const metadata = item.metadata === undefined ? {} : { metadata: item.metadata };
      if (batch.cancelled || this.#closing) {
        batch.responses.push({ ...metadata, error: { code: 1, message: 'The batch was cancelled before this request ran.' } });
        continue;
      }
      batch.state = 'BATCH_STATE_RUNNING';
      const model = typeof item.request.model === 'string' ? item.request.model.replace(/^models\//, '') : batch.model.replace(/^models\//, '');
      const { model: _model, ...request } = item.request;
      const response = await fetch(`${this.options.origin()}/v1beta/models/${encodeURIComponent(model)}:generateContent`, {
        method: 'POST', headers: { 'x-goog-api-key': this.options.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(request),
      }).catch(() => null);
      const answer = response === null ? null : await response.json().catch(() => null) as Record<string, unknown> | null;
      if (response !== null && response.ok && answer !== null) batch.responses.push({ ...metadata, response: answer });
      else {
        const error = answer !== null && isObject(answer.error) ? answer.error : { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' };
        const codes: Record<string, number> = { INVALID_ARGUMENT: 3, NOT_FOUND: 5, PERMISSION_DENIED: 7, RESOURCE_EXHAUSTED: 8, INTERNAL: 13, UNAVAILABLE: 14, UNAUTHENTICATED: 16 };
        batch.responses.push({ ...metadata, error: { code: codes[String(error.status)] ?? 2, message: String(error.message ?? 'failed') } });
      }
      batch.updateTime = new Date().toISOString();
    }
    batch.state = batch.cancelled ? 'BATCH_STATE_CANCELLED' : 'BATCH_STATE_SUCCEEDED';
    batch.endTime = new Date().toISOString();
    batch.updateTime = batch.endTime;
  }
}
