/**
 * OpenAI's Files and Batch APIs inside the mock OpenAI upstream, as api.openai.com speaks them: `POST /v1/files`
 * (multipart `purpose` + `file`), `GET /v1/files[/{id}[/content]]`, `DELETE /v1/files/{id}`, `POST /v1/batches`,
 * `GET /v1/batches[/{id}]`, `POST /v1/batches/{id}/cancel`. A batch moves validating → in_progress → finalizing →
 * completed (or cancelling → cancelled), running each line through the mock's own endpoint over HTTP one after the
 * other, then writes its output file (answers below 400) and error file (the rest), as OpenAI writes them.
 * Like OpenAI, a batch's lines must all name one model and call the batch's endpoint.
 */
import { randomBytes } from 'node:crypto';
import { errorBody, MockHttpError } from './mock-openai-upstream-wire.js';

export interface MockOpenAIFile {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: 'processed';
  status_details: null;
  expires_at: number | null;
}

type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

export interface MockOpenAIBatch {
  id: string;
  object: 'batch';
  endpoint: string;
  errors: { object: 'list'; data: Array<{ code: string; message: string; param: string | null; line: number | null }> } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
  model: string | null;
  usage: { input_tokens: number; input_tokens_details: { cached_tokens: number }; output_tokens: number; output_tokens_details: { reasoning_tokens: number }; total_tokens: number };
}

export interface MockOpenAIBatchesOptions {
  /** The mock's own origin (lines are run against it) and the key it takes. */
  origin: () => string;
  apiKey: string;
  /** Pause before each line runs (default 0), so a test can see a batch in progress or cancel it mid-way. */
  lineDelayMs?: number;
  /** Pause after a batch is created before the creation is answered (default 0): a caller can be stopped in between. */
  createHoldMs?: number;
}

export interface MockOpenAIAnswer {
  status: number;
  body: unknown;
  /** A file's content is sent as it is. */
  raw?: Buffer;
}

const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'];
const BATCH_ENDPOINTS = ['/v1/responses', '/v1/chat/completions', '/v1/embeddings', '/v1/completions', '/v1/moderations'];
/** A batch's status now (a cancel changes it while its lines run). */
const statusOf = (batch: MockOpenAIBatch): BatchStatus => batch.status;
const now = (): number => Math.floor(Date.now() / 1000);
const notFound = (what: string, id: string): MockHttpError => new MockHttpError(404, errorBody(`No such ${what}: '${id}'`, 'invalid_request_error', null, null));
const invalid = (message: string, param: string | null = null): MockHttpError => new MockHttpError(400, errorBody(message, 'invalid_request_error', param, null));

/** The Files and Batch APIs' state and handlers of one mock upstream. */
export class MockOpenAIBatches {
  readonly files = new Map<string, { file: MockOpenAIFile; content: Buffer }>();
  readonly batches = new Map<string, MockOpenAIBatch>();
  #closing = false;

  constructor(private readonly options: MockOpenAIBatchesOptions) {}

  /** Whether the path is one of the Files or Batch APIs' (they are answered by `answer`). */
  static serves(path: string): boolean {
    return path === '/v1/files' || path.startsWith('/v1/files/') || path === '/v1/batches' || path.startsWith('/v1/batches/');
  }

  async answer(method: string, path: string, params: URLSearchParams, contentType: string, rawBody: Buffer): Promise<MockOpenAIAnswer> {
    if (method === 'POST' && path === '/v1/files') return { status: 200, body: await this.#upload(contentType, rawBody) };
    if (method === 'GET' && path === '/v1/files') {
      const purpose = params.get('purpose');
      const files = [...this.files.values()].map((entry) => entry.file).filter((file) => purpose === null || file.purpose === purpose).reverse();
      return { status: 200, body: { object: 'list', data: files, first_id: files[0]?.id ?? null, last_id: files.at(-1)?.id ?? null, has_more: false } };
    }
    const file = /^\/v1\/files\/([^/]+)(\/content)?$/.exec(path);
    if (file !== null) {
      const id = decodeURIComponent(file[1] as string);
      const entry = this.files.get(id);
      if (entry === undefined) throw notFound('file', id);
      if (method === 'GET' && file[2] !== undefined) return { status: 200, body: null, raw: entry.content };
      if (method === 'GET') return { status: 200, body: entry.file };
      if (method === 'DELETE') {
        this.files.delete(id);
        return { status: 200, body: { id, object: 'file', deleted: true } };
      }
    }
    if (method === 'POST' && path === '/v1/batches') {
      const created = this.#create(JSON.parse(rawBody.toString('utf8') || '{}') as Record<string, unknown>);
      if ((this.options.createHoldMs ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, this.options.createHoldMs));
      return { status: 200, body: created };
    }
    if (method === 'GET' && path === '/v1/batches') {
      const limit = Number(params.get('limit') ?? 20);
      let list = [...this.batches.values()].reverse();
      const after = params.get('after');
      if (after !== null) list = list.slice(list.findIndex((batch) => batch.id === after) + 1);
      const page = list.slice(0, limit);
      return { status: 200, body: { object: 'list', data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: list.length > limit } };
    }
    const batch = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(path);
    if (batch !== null) {
      const id = decodeURIComponent(batch[1] as string);
      const found = this.batches.get(id);
      if (found === undefined) throw notFound('batch', id);
      if (method === 'GET' && batch[2] === undefined) return { status: 200, body: found };
      if (method === 'POST' && batch[2] !== undefined) {
        if (found.status === 'validating' || found.status === 'in_progress' || found.status === 'finalizing') {
          found.status = 'cancelling';
          found.cancelling_at = now();
        } else if (found.status !== 'cancelling') {
          throw new MockHttpError(409, errorBody(`Cannot cancel a batch with status '${found.status}'.`, 'invalid_request_error', null, null));
        }
        return { status: 200, body: found };
      }
    }
    throw new MockHttpError(404, errorBody(`Invalid URL (${method} ${path})`, 'invalid_request_error', null, null));
  }

  close(): void {
    this.#closing = true;
  }

  #store(filename: string, purpose: string, content: Buffer): MockOpenAIFile {
    const file: MockOpenAIFile = {
      id: `file-${randomBytes(12).toString('hex')}`, object: 'file', bytes: content.length, created_at: now(), filename, purpose, status: 'processed', status_details: null, expires_at: null,
    };
    this.files.set(file.id, { file, content });
    return file;
  }

  async #upload(contentType: string, rawBody: Buffer): Promise<MockOpenAIFile> {
    if (!/^multipart\/form-data/i.test(contentType)) throw invalid(`Invalid Content-Type header (${contentType}), expected multipart/form-data.`);
    const form = await new Request('http://mock/', { method: 'POST', headers: { 'content-type': contentType }, body: rawBody }).formData().catch(() => {
      throw invalid('Could not parse multipart form');
    });
    const purpose = form.get('purpose');
    const upload = form.get('file');
    if (typeof purpose !== 'string') throw invalid('Missing required parameter: \'purpose\'.', 'purpose');
    if (!FILE_PURPOSES.includes(purpose)) throw invalid(`'${purpose}' is not one of ${FILE_PURPOSES.map((name) => `'${name}'`).join(', ')} - 'purpose'`, 'purpose');
    if (upload === null || typeof upload === 'string') throw invalid('Missing required parameter: \'file\'.', 'file');
    if (purpose === 'batch' && !upload.name.endsWith('.jsonl')) throw invalid('Invalid file format for Batch API. Must be .jsonl', 'file');
    return this.#store(upload.name, purpose, Buffer.from(await upload.arrayBuffer()));
  }

  #create(body: Record<string, unknown>): MockOpenAIBatch {
    const { input_file_id: inputFileId, endpoint, completion_window: window, metadata } = body;
    if (typeof inputFileId !== 'string') throw invalid('Missing required parameter: \'input_file_id\'.', 'input_file_id');
    if (typeof endpoint !== 'string' || !BATCH_ENDPOINTS.includes(endpoint)) throw invalid(`Invalid value for 'endpoint': expected one of ${BATCH_ENDPOINTS.join(', ')}.`, 'endpoint');
    if (window !== '24h') throw invalid('Invalid value for \'completion_window\': expected \'24h\'.', 'completion_window');
    const input = this.files.get(inputFileId);
    if (input === undefined) throw invalid(`Invalid 'input_file_id': '${inputFileId}'. File not found.`, 'input_file_id');
    if (input.file.purpose !== 'batch') throw invalid(`Invalid 'input_file_id': '${inputFileId}'. The file's purpose must be 'batch'.`, 'input_file_id');
    const created = now();
    const batch: MockOpenAIBatch = {
      id: `batch_${randomBytes(12).toString('hex')}`, object: 'batch', endpoint, errors: null, input_file_id: inputFileId, completion_window: '24h',
      status: 'validating', output_file_id: null, error_file_id: null, created_at: created, in_progress_at: null, expires_at: created + 86_400,
      finalizing_at: null, completed_at: null, failed_at: null, expired_at: null, cancelling_at: null, cancelled_at: null,
      request_counts: { total: 0, completed: 0, failed: 0 }, metadata: (metadata ?? null) as Record<string, string> | null, model: null,
      usage: { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 },
    };
    this.batches.set(batch.id, batch);
    setImmediate(() => void this.#run(batch, input.content.toString('utf8')));
    return batch;
  }

  async #run(batch: MockOpenAIBatch, text: string): Promise<void> {
    const lines: Array<{ custom_id: string; body: Record<string, unknown> }> = [];
    const errors: Array<{ code: string; message: string; param: string | null; line: number | null }> = [];
    const models = new Set<string>();
    text.split('\n').forEach((raw, index) => {
      if (raw.trim() === '') return;
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        errors.push({ code: 'invalid_json_line', message: 'This line is not parseable as valid JSON.', param: null, line: index + 1 });
        return;
      }
      const body = parsed.body as Record<string, unknown> | undefined;
      if (parsed.url !== batch.endpoint) errors.push({ code: 'mismatched_endpoint', message: `The provided endpoint '${String(parsed.url)}' does not match the batch's endpoint '${batch.endpoint}'.`, param: 'url', line: index + 1 });
      else if (typeof parsed.custom_id !== 'string' || body === undefined || typeof body.model !== 'string') errors.push({ code: 'invalid_request', message: 'Each line needs a custom_id and a body naming its model.', param: 'body', line: index + 1 });
      else {
        models.add(body.model);
        if (models.size > 1) errors.push({ code: 'mismatched_model', message: 'All requests in a batch must use the same model.', param: 'body.model', line: index + 1 });
        lines.push({ custom_id: parsed.custom_id, body });
      }
    });
    if (errors.length > 0 || lines.length === 0) {
      batch.status = 'failed';
      batch.failed_at = now();
      batch.errors = { object: 'list', data: errors.length > 0 ? errors : [{ code: 'empty_file', message: 'The batch input file is empty.', param: null, line: null }] };
      return;
    }
    batch.model = [...models][0] ?? null;
    batch.status = 'in_progress';
    batch.in_progress_at = now();
    batch.request_counts.total = lines.length;
    const output: string[] = [];
    const failed: string[] = [];
    for (const [index, line] of lines.entries()) {
      if (this.options.lineDelayMs !== undefined && this.options.lineDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.options.lineDelayMs));
      if (statusOf(batch) === 'cancelling' || this.#closing) break;
      const response = await fetch(`${this.options.origin()}${batch.endpoint}`, {
        method: 'POST', headers: { authorization: `Bearer ${this.options.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(line.body),
      }).catch(() => null);
      if (response === null) break;
      const requestId = response.headers.get('x-request-id') ?? `req_${randomBytes(16).toString('hex')}`;
      const body = await response.json() as Record<string, unknown>;
      const result = JSON.stringify({ id: `batch_req_${randomBytes(12).toString('hex')}`, custom_id: line.custom_id, response: { status_code: response.status, request_id: requestId, body }, error: null });
      if (response.status < 400) {
        output.push(result);
        batch.request_counts.completed += 1;
        const usage = body.usage as Record<string, number> | undefined;
        const input = usage?.prompt_tokens ?? usage?.input_tokens ?? 0;
        const outputTokens = usage?.completion_tokens ?? usage?.output_tokens ?? 0;
        batch.usage.input_tokens += input;
        batch.usage.output_tokens += outputTokens;
        batch.usage.total_tokens += input + outputTokens;
      } else {
        failed.push(result);
        batch.request_counts.failed += 1;
      }
      if (index === lines.length - 1 && batch.status === 'in_progress') {
        batch.status = 'finalizing';
        batch.finalizing_at = now();
      }
    }
    if (output.length > 0) batch.output_file_id = this.#store(`${batch.id}_output.jsonl`, 'batch_output', Buffer.from(`${output.join('\n')}\n`)).id;
    if (failed.length > 0) batch.error_file_id = this.#store(`${batch.id}_error.jsonl`, 'batch_output', Buffer.from(`${failed.join('\n')}\n`)).id;
    if (statusOf(batch) === 'cancelling') {
      batch.status = 'cancelled';
      batch.cancelled_at = now();
    } else {
      batch.status = 'completed';
      batch.completed_at = now();
    }
  }
}
