/**
 * A faithful mock of Google's Gemini API (generativelanguage.googleapis.com, v1beta and v1) as an upstream of the
 * gateway: a real node:http server on 127.0.0.1 speaking Gemini's wire format (generateContent, both stream
 * framings, countTokens, embedContent / batchEmbedContents, the model list, Google's error envelope), recording
 * every request and able to inject faults.
 *
 *   const mock = await startMockGeminiUpstream();
 *   new GoogleGenAI({ apiKey: 'gemini-upstream-test', httpOptions: { baseUrl: mock.url } });
 *   mock.setFault({ kind: 'status', status: 503, times: 1 });
 *   await mock.close();
 *
 * Validation (mock-gemini-upstream-validate.ts) is as strict as the real API; answers
 * (mock-gemini-upstream-answers.ts) are deterministic. Keys go in `x-goog-api-key` or `?key=`; a wrong key is a
 * 400 API_KEY_INVALID and a missing one a 403, as Google answers. Model ids starting with `unknown-` do not exist;
 * ids containing `embedding` are embedding models, every other id is a chat model with capabilities by name.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MockGeminiBatches } from './mock-gemini-batches.js';
import { buildChunks, buildResponse, embeddingVector, planAnswer, promptTokens, type UsageOverride } from './mock-gemini-upstream-answers.js';
import { checkFields, validateContents, validateGenerateContent } from './mock-gemini-upstream-validate.js';
import { imageGenerationAnswer, isImageModel } from './mock-gemini-upstream-images.js';
import {
  defaultErrorBodyForStatus,
  describeModel,
  DEFAULT_MODELS,
  field,
  googleError,
  invalid,
  invalidApiKey,
  invalidJson,
  isObject,
  missingApiKey,
  MockGeminiError,
  modelNotFound,
  modelResource,
  type GoogleErrorBody,
  type JsonObject,
  type MockModel,
} from './mock-gemini-upstream-wire.js';
import { cutConnection, MockServerKit, writeWithBackpressure, type CommonFault, type RecordedRequest } from './mock-server-kit.js';

export { countTokens, embeddingVector, signatureFor, IMAGE_TOKENS, type UsageOverride } from './mock-gemini-upstream-answers.js';
export { DEFAULT_MODELS, describeModel } from './mock-gemini-upstream-wire.js';

export type { RecordedRequest } from './mock-server-kit.js';

export type MockFault =
  | CommonFault
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string>; times?: number }
  /** ends the connection after N stream chunks (or halfway through a non-streaming body) */
  | { kind: 'cut-stream'; afterChunks: number; times?: number }
  /** streams N chunks, then Google's error object as one more chunk, and ends the response */
  | { kind: 'stream-error'; afterChunks: number; error?: GoogleErrorBody['error']; times?: number };

export interface MockGeminiUpstreamOptions {
  /** key expected in `x-goog-api-key` or `?key=` (default gemini-upstream-test) */
  apiKey?: string;
  /** pause between streamed chunks (default 0) */
  chunkDelayMs?: number;
  /** pause before every answer (default 0) */
  responseDelayMs?: number;
  /** listen port (default 0: random) */
  port?: number;
  /** models of GET /v1beta/models */
  models?: string[];
  /** keep requests in `requests` (default true) */
  recordRequests?: boolean;
  /** pause before each request of a batch runs (default 0) */
  batchLineDelayMs?: number;
  /** pause between creating a batch and answering its creation (default 0) */
  batchCreateHoldMs?: number;
}

export interface MockGeminiUpstream {
  /** http://127.0.0.1:PORT — the SDK's `httpOptions.baseUrl` and the channel's base URL */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** batch mode's state: batches by name (`batches/{id}`) */
  batches: MockGeminiBatches;
  /** applies to subsequent requests; faults with `times` clear themselves after that many requests */
  setFault(fault: MockFault | null): void;
  /** overrides usageMetadata fields of subsequent answers (e.g. cachedContentTokenCount); null resets */
  setUsageOverride(override: UsageOverride | null): void;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;
const ROUTE = /^\/(v1beta|v1|v1alpha)\/models\/([^/:]+):([A-Za-z]+)$/;
const MODEL_ROUTE = /^\/(v1beta|v1|v1alpha)\/models(?:\/([^/:]+))?$/;
const TASK_TYPES = new Set([
  'TASK_TYPE_UNSPECIFIED', 'RETRIEVAL_QUERY', 'RETRIEVAL_DOCUMENT', 'SEMANTIC_SIMILARITY', 'CLASSIFICATION', 'CLUSTERING',
  'QUESTION_ANSWERING', 'FACT_VERIFICATION', 'CODE_RETRIEVAL_QUERY',
]);

const pretty = (value: unknown): string => JSON.stringify(value, null, 2);

export async function startMockGeminiUpstream(options: MockGeminiUpstreamOptions = {}): Promise<MockGeminiUpstream> {
  const apiKey = options.apiKey ?? 'gemini-upstream-test';
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const responseDelayMs = options.responseDelayMs ?? 0;
  const models = options.models ?? [...DEFAULT_MODELS];
  const record = options.recordRequests ?? true;
  const kit = new MockServerKit<MockFault>(record);
  const { requests } = kit;
  const sleep = (ms: number): Promise<void> => kit.sleep(ms);
  let usageOverride: UsageOverride | null = null;

  const sendJson = (res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void => {
    if (res.destroyed || res.headersSent) return;
    const text = `${pretty(body)}\n`;
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': String(Buffer.byteLength(text)), vary: 'Origin, X-Origin, Referer', ...extra });
    res.end(text);
  };

  const write = writeWithBackpressure;

  const resolveModel = (name: string, version: string, method: string, kind: MockModel['kind']): MockModel => {
    const model = describeModel(decodeURIComponent(name));
    if (model.name.startsWith('unknown-') || model.kind !== kind) throw modelNotFound(model.name, version, method);
    return model;
  };

  const handleGenerate = async (res: ServerResponse, body: unknown, model: MockModel, stream: boolean, sse: boolean, f: MockFault | null): Promise<void> => {
    const request = validateGenerateContent(body, model);
    if (isImageModel(model.name) && !stream) return sendJson(res, 200, imageGenerationAnswer(body, request, model.name, randomBytes(15).toString('base64url')));
    const plan = planAnswer(request, model);
    const meta = { model: model.name, responseId: randomBytes(15).toString('base64url'), prompt: promptTokens(request), override: usageOverride };
    if (!stream) {
      if (f?.kind === 'cut-stream' || f?.kind === 'stream-error') {
        const text = pretty(buildResponse(plan, meta));
        res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8', 'content-length': String(Buffer.byteLength(text)) });
        res.write(text.slice(0, Math.floor(text.length / 2)));
        cutConnection(res);
        return;
      }
      return sendJson(res, 200, buildResponse(plan, meta));
    }
    const chunks = buildChunks(plan, meta);
    res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json; charset=UTF-8', 'x-content-type-options': 'nosniff' });
    const frame = (index: number, json: unknown): string => {
      if (sse) return `data: ${JSON.stringify(json)}\r\n\r\n`;
      return `${index === 0 ? '[' : '\n,\r\n'}${pretty(json)}`;
    };
    for (let index = 0; index <= chunks.length; index += 1) {
      if (res.destroyed || kit.closing) return;
      if (f?.kind === 'cut-stream' && f.afterChunks === index) return cutConnection(res);
      if (f?.kind === 'stream-error' && f.afterChunks === index) {
        await write(res, frame(index, { error: f.error ?? defaultErrorBodyForStatus(500).error }));
        if (!sse) await write(res, '\n]');
        res.end();
        return;
      }
      if (index === chunks.length) break;
      await write(res, frame(index, chunks[index]));
      if (chunkDelayMs > 0 && index < chunks.length - 1) await sleep(chunkDelayMs);
    }
    if (!sse) await write(res, chunks.length === 0 ? '[]' : '\n]');
    res.end();
  };

  const handleCountTokens = (res: ServerResponse, body: unknown, model: MockModel): void => {
    if (!isObject(body)) throw invalid('Invalid JSON payload received. Expected an object.');
    checkFields(body, new Set(['contents', 'generateContentRequest']), null);
    const nested = field(body, 'generateContentRequest');
    const contents = field(body, 'contents');
    if (nested !== undefined && contents !== undefined) throw invalid('* CountTokensRequest: contents and generate_content_request are mutually exclusive.\n');
    let prompt: number;
    if (nested !== undefined) {
      if (!isObject(nested) || typeof field(nested, 'model') !== 'string') throw invalid('* CountTokensRequest.generate_content_request.model: model is required.\n');
      prompt = promptTokens(validateGenerateContent(nested, model));
    } else prompt = promptTokens({ contents: validateContents(contents), system: '', toolsJson: 'null' });
    sendJson(res, 200, { totalTokens: prompt, promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }] });
  };

  const embedOne = (request: unknown, model: MockModel, at: string, batch: boolean): JsonObject => {
    if (!isObject(request)) throw invalid(`Invalid value at '${at}'`);
    checkFields(request, new Set(['model', 'content', 'taskType', 'title', 'outputDimensionality']), at === '' ? null : at);
    const requestModel = field(request, 'model');
    if (batch && requestModel !== `models/${model.name}`) {
      throw invalid(`* BatchEmbedContentsRequest.${at}.model: the model of each request must be the model of the batch, models/${model.name}.\n`);
    }
    const content = validateContents([field(request, 'content')])[0];
    const text = content?.parts.map((part) => (part.kind === 'text' ? part.text : '')).join(' ') ?? '';
    const taskType = field(request, 'taskType');
    if (taskType !== undefined && (typeof taskType !== 'string' || !TASK_TYPES.has(taskType))) throw invalid(`Invalid value at '${at}task_type', "${String(taskType)}"`);
    const size = field(request, 'outputDimensionality') ?? model.dimensions;
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > model.dimensions) {
      throw invalid(`* EmbedContentRequest.output_dimensionality: output_dimensionality must be between 1 and ${model.dimensions}.\n`);
    }
    return { values: embeddingVector(`${taskType ?? ''}\n${text}`, size) };
  };

  let origin = '';
  const batches = new MockGeminiBatches({
    origin: () => origin, apiKey,
    ...(options.batchLineDelayMs === undefined ? {} : { lineDelayMs: options.batchLineDelayMs }),
    ...(options.batchCreateHoldMs === undefined ? {} : { createHoldMs: options.batchCreateHoldMs }),
  });

  const handle = async (req: IncomingMessage, res: ServerResponse, rawBody: string): Promise<void> => {
    const { method, path, params, body, jsonError } = kit.intake(req, rawBody);
    const f = kit.takeFault();
    if (!(await kit.beforeAnswer(req, res, f, responseDelayMs))) return;
    if (f?.kind === 'status') {
      const payload = f.body === undefined ? defaultErrorBodyForStatus(f.status) : f.body;
      const text = typeof payload === 'string' ? payload : pretty(payload);
      const extra: Record<string, string> = f.status === 429 && f.headers === undefined ? { 'retry-after': '1' } : {};
      res.writeHead(f.status, { 'content-type': typeof payload === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=UTF-8', ...extra, ...(f.headers ?? {}) });
      res.end(text);
      return;
    }
    const presented = req.headers['x-goog-api-key'] ?? params.get('key') ?? undefined;
    if (presented === undefined || presented === '') throw missingApiKey();
    if (presented !== apiKey) throw invalidApiKey();
    if (jsonError) throw invalidJson();

    const call = ROUTE.exec(path);
    if (call !== null && method === 'POST') {
      const [, version = 'v1beta', name = '', verb = ''] = call;
      switch (verb) {
        case 'generateContent':
          return handleGenerate(res, body ?? {}, resolveModel(name, version, verb, 'chat'), false, false, f);
        case 'streamGenerateContent':
          return handleGenerate(res, body ?? {}, resolveModel(name, version, verb, 'chat'), true, params.get('alt') === 'sse', f);
        case 'countTokens':
          return handleCountTokens(res, body ?? {}, describeModel(name));
        case 'embedContent':
          return sendJson(res, 200, { embedding: embedOne(body ?? {}, resolveModel(name, version, verb, 'embedding'), '', false) });
        case 'batchGenerateContent':
          return sendJson(res, 200, await batches.create(resolveModel(name, version, verb, 'chat').name, body));
        case 'batchEmbedContents': {
          const model = resolveModel(name, version, verb, 'embedding');
          if (!isObject(body)) throw invalid('Invalid JSON payload received. Expected an object.');
          checkFields(body, new Set(['requests']), null);
          const list = field(body, 'requests');
          if (!Array.isArray(list) || list.length === 0) throw invalid('* BatchEmbedContentsRequest.requests: requests must not be empty.\n');
          if (list.length > 100) throw invalid('* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch.\n');
          return sendJson(res, 200, { embeddings: list.map((item: unknown, index) => embedOne(item, model, `requests[${index}].`, true)) });
        }
        default:
          throw googleError(404, 'Method not found.');
      }
    }
    if (MockGeminiBatches.serves(path)) return sendJson(res, 200, batches.answer(method, path, params));
    const listing = MODEL_ROUTE.exec(path);
    if (listing !== null && method === 'GET') {
      const [, version = 'v1beta', name] = listing;
      if (name !== undefined) {
        const id = decodeURIComponent(name);
        if (!models.includes(id)) throw googleError(404, `models/${id} is not found for API version ${version}.`);
        return sendJson(res, 200, modelResource(describeModel(id)));
      }
      const size = Math.min(Number(params.get('pageSize') ?? '50') || 50, 1000);
      const offset = params.has('pageToken') ? Number(Buffer.from(params.get('pageToken') ?? '', 'base64url').toString()) : 0;
      if (!Number.isInteger(offset) || offset < 0) throw invalid('Invalid page token.');
      const page = models.slice(offset, offset + size).map((id) => modelResource(describeModel(id)));
      const next = offset + size < models.length ? { nextPageToken: Buffer.from(String(offset + size)).toString('base64url') } : {};
      return sendJson(res, 200, { models: page, ...next });
    }
    throw googleError(404, `The requested URL ${path} was not found on this server.`);
  };

  const { port } = await kit.listen({
    port: options.port,
    maxBodyBytes: MAX_BODY_BYTES,
    handle,
    tooLarge: (_req, res) => sendJson(res, 413, { error: { code: 413, message: 'Request payload size exceeds the limit.', status: 'INVALID_ARGUMENT' } }),
    failed: (_req, res, error) => {
      if (error instanceof MockGeminiError) sendJson(res, error.status, error.body, error.headers);
      else if (!res.headersSent) sendJson(res, 500, defaultErrorBodyForStatus(500));
      else res.destroy();
    },
  });
  origin = `http://127.0.0.1:${port}`;
  return {
    url: origin,
    port,
    requests,
    batches,
    setFault: (next) => kit.setFault(next),
    setUsageOverride(next) {
      usageOverride = next;
    },
    close: () => {
      batches.close();
      return kit.close();
    },
  };
}
