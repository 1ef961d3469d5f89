/**
 * A faithful mock of the OpenAI API as an upstream of the gateway: a real node:http server on
 * 127.0.0.1 speaking OpenAI's wire format (chat completions, streaming SSE, tool calls, usage,
 * models, errors), recording every request and able to inject faults.
 *
 *   const mock = await startMockOpenAIUpstream();
 *   new OpenAI({ baseURL: mock.url, apiKey: 'sk-upstream-test' });
 *   mock.setFault({ kind: 'status', status: 500, times: 1 });
 *   await mock.close();
 *
 * Answer rules (echo text, tool calls on "weather", token counting) are described in
 * mock-openai-upstream-responses.ts. Model ids starting with `unknown-` answer 404 model_not_found.
 */
import { answerEmbeddings } from './mock-openai-upstream-embeddings.js';
import { answerInputTokens, answerResponses, type StoredResponse } from './mock-openai-upstream-responses-api.js';
import { serveResponsesWebSocket } from './mock-openai-upstream-responses-ws.js';
import { isOpenAIMediaRequest, serveOpenAIMedia } from './mock-openai-media.js';
import { MockOpenAIBatches } from './mock-openai-batches.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import {
  DEFAULT_MODELS,
  defaultErrorBodyForStatus,
  errorBody,
  invalidApiKeyError,
  invalidJsonError,
  MockHttpError,
  modelNotFoundError,
  modelObject,
  notFoundUrlError,
  type OpenAIErrorBody,
} from './mock-openai-upstream-wire.js';
import { validateChatRequest, type ChatRequest } from './mock-openai-upstream-validate.js';
import { cutConnection, MockServerKit, writeWithBackpressure, type CommonFault, type RecordedRequest } from './mock-server-kit.js';
import {
  buildChunks,
  buildCompletion,
  buildUsage,
  countPromptTokens,
  messageTokens,
  newCompletionMeta,
  planAnswer,
  toolsTokens,
  type UsageOverride,
} from './mock-openai-upstream-responses.js';

export { estimateTokens, splitIntoTokens, DEFAULT_MODELS } from './mock-openai-upstream-wire.js';
export { countPromptTokens, contentText, type Usage, type UsageOverride } from './mock-openai-upstream-responses.js';
export { KNOWN_CHAT_PARAMS } from './mock-openai-upstream-validate.js';
export type { RecordedRequest } from './mock-server-kit.js';

export type MockFault =
  | CommonFault
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string>; times?: number }
  | { kind: 'cut-stream'; afterChunks: number; times?: number } // end the connection after N data events
  /** streams N data events, then `data: {"error":{…}}` and ends the response, as OpenAI does on mid-stream failures */
  | { kind: 'stream-error'; afterChunks: number; error?: OpenAIErrorBody['error']; times?: number };

export interface MockOpenAIUpstreamOptions {
  /** key expected in `Authorization: Bearer …` (default sk-upstream-test) */
  apiKey?: string;
  /** pause between streamed data events (default 0) */
  chunkDelayMs?: number;
  /** pause before every answer (default 0), e.g. to simulate upstream latency */
  responseDelayMs?: number;
  /** listen port (default 0: random) */
  port?: number;
  /** models of GET /v1/models (chat completions accept any model id except `unknown-*`) */
  models?: string[];
  /** reject unknown top-level chat parameters like OpenAI does (default true) */
  strictParams?: boolean;
  /** keep requests in `requests` (default true; turn off for long benchmarks) */
  recordRequests?: boolean;
  /** pause before each line of a batch runs (default 0), so a batch can be seen in progress or cancelled mid-way */
  batchLineDelayMs?: number;
  /** pause between creating a batch and answering its creation (default 0) */
  batchCreateHoldMs?: number;
}

export interface MockOpenAIUpstream {
  /** SDK-style base URL including /v1, e.g. http://127.0.0.1:PORT/v1 */
  url: string;
  /** http://127.0.0.1:PORT */
  origin: string;
  port: number;
  requests: RecordedRequest[];
  /** the Files and Batch APIs' state: uploaded files and batches by id */
  batches: MockOpenAIBatches;
  /** applies to subsequent requests; faults with `times` clear themselves after that many requests */
  setFault(fault: MockFault | null): void;
  /** overrides usage fields of subsequent answers (e.g. cached_tokens for billing tests); null resets */
  setUsageOverride(override: UsageOverride | null): void;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;
const MAX_CACHE_KEYS = 50_000;

export async function startMockOpenAIUpstream(options: MockOpenAIUpstreamOptions = {}): Promise<MockOpenAIUpstream> {
  const apiKey = options.apiKey ?? 'sk-upstream-test';
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const responseDelayMs = options.responseDelayMs ?? 0;
  const models = options.models ?? [...DEFAULT_MODELS];
  const strictParams = options.strictParams ?? true;
  const record = options.recordRequests ?? true;

  const kit = new MockServerKit<MockFault>(record);
  const { requests } = kit;
  const sleep = (ms: number): Promise<void> => kit.sleep(ms);
  const takeFault = (): MockFault | null => kit.takeFault();
  const promptCache = new Set<string>();
  const storedResponses = new Map<string, StoredResponse>();
  let usageOverride: UsageOverride | null = null;
  const batches = new MockOpenAIBatches({ origin: () => origin, apiKey, ...(options.batchLineDelayMs === undefined ? {} : { lineDelayMs: options.batchLineDelayMs }), ...(options.batchCreateHoldMs === undefined ? {} : { createHoldMs: options.batchCreateHoldMs }) });

  /** Simulated prompt caching: the longest previously seen message prefix of >= 1024 tokens, in 128-token steps. */
  const cachedTokensFor = (req: ChatRequest, promptTokens: number): number => {
    const hash = createHash('sha1');
    hash.update(`${req.model}\n${JSON.stringify(req.body.tools ?? null)}`);
    let prefixTokens = 3 + toolsTokens(req.body);
    let cached = 0;
    const keys: string[] = [];
    for (const m of req.messages) {
      hash.update(JSON.stringify(m));
      prefixTokens += messageTokens(m);
      const key = hash.copy().digest('hex');
      keys.push(key);
      if (promptCache.has(key)) cached = Math.min(prefixTokens, promptTokens);
    }
    if (promptCache.size + keys.length > MAX_CACHE_KEYS) promptCache.clear();
    for (const k of keys) promptCache.add(k);
    return cached >= 1024 ? 1024 + Math.floor((cached - 1024) / 128) * 128 : 0;
  };

  const commonHeaders = (): Record<string, string> => ({
    'x-request-id': `req_${randomBytes(16).toString('hex')}`,
    'openai-version': '2020-10-01',
    'openai-organization': 'mock-org',
    'openai-processing-ms': '1',
    'x-ratelimit-limit-requests': '10000',
    'x-ratelimit-remaining-requests': '9999',
    'x-ratelimit-reset-requests': '6ms',
    'x-ratelimit-limit-tokens': '30000000',
    'x-ratelimit-remaining-tokens': '29999000',
    'x-ratelimit-reset-tokens': '0s',
  });

  const sendJson = (res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void => {
    if (res.destroyed || res.headersSent) return;
    const text = JSON.stringify(body);
    res.writeHead(status, {
      ...commonHeaders(),
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      ...extra,
    });
    res.end(text);
  };

  const sendError = (res: ServerResponse, err: MockHttpError): void => sendJson(res, err.status, err.body, err.headers);

  const writeEvent = (res: ServerResponse, data: string): Promise<void> | undefined => writeWithBackpressure(res, `data: ${data}\n\n`);

  const handleChat = async (res: ServerResponse, body: unknown, f: MockFault | null): Promise<void> => {
    const req = validateChatRequest(body, { strictParams });
    const promptTokens = countPromptTokens(req);
    const plan = planAnswer(req);
    const usage = buildUsage(promptTokens, plan, req.n, cachedTokensFor(req, promptTokens), usageOverride);
    const meta = newCompletionMeta(req);

    if (!req.stream) {
      const completion = buildCompletion(meta, plan, req.n, usage);
      if (f?.kind === 'cut-stream' || f?.kind === 'stream-error') {
        // A cut non-streaming answer: headers and half of the body, then the connection ends.
        const text = JSON.stringify(completion);
        res.writeHead(200, { ...commonHeaders(), 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
        res.write(text.slice(0, Math.floor(text.length / 2)));
        cutConnection(res);
        return;
      }
      sendJson(res, 200, completion);
      return;
    }

    const chunks = buildChunks(meta, plan, req.n, usage, req.includeUsage);
    res.writeHead(200, {
      ...commonHeaders(),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    for (let i = 0; i <= chunks.length; i++) {
      if (res.destroyed || kit.closing) return;
      if (f?.kind === 'cut-stream' && f.afterChunks === i) {
        cutConnection(res);
        return;
      }
      if (f?.kind === 'stream-error' && f.afterChunks === i) {
        const error = f.error ?? defaultErrorBodyForStatus(500).error;
        await writeEvent(res, JSON.stringify({ error }));
        res.end();
        return;
      }
      if (i === chunks.length) break;
      const pending = writeEvent(res, JSON.stringify(chunks[i]));
      if (pending) await pending;
      if (chunkDelayMs > 0 && i < chunks.length - 1) await sleep(chunkDelayMs);
    }
    if (res.destroyed || kit.closing) return;
    await writeEvent(res, '[DONE]');
    res.end();
  };

  /** POST /v1/responses: a response object, or its event sequence (`event:` + `data:` framing) with stream faults. */
  const handleResponses = async (res: ServerResponse, body: unknown, f: MockFault | null): Promise<void> => {
    const answer = answerResponses(body ?? {}, storedResponses, { strict: strictParams, usageOverride });
    if (answer.kind === 'json') return sendJson(res, 200, answer.body);
    res.writeHead(200, { ...commonHeaders(), 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (let i = 0; i < answer.events.length; i++) {
      if (res.destroyed || kit.closing) return;
      if (f?.kind === 'cut-stream' && f.afterChunks === i) return cutConnection(res);
      if (f?.kind === 'stream-error' && f.afterChunks === i) {
        const error = f.error ?? defaultErrorBodyForStatus(500).error;
        res.end(`event: error\ndata: ${JSON.stringify({ type: 'error', sequence_number: i, code: error.code, message: error.message, param: error.param })}\n\n`);
        return;
      }
      const event = answer.events[i]!;
      if (!res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`)) await new Promise((resolve) => res.once('drain', resolve));
      if (chunkDelayMs > 0) await sleep(chunkDelayMs);
    }
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, rawBody: string): Promise<void> => {
    const { method, path, body, jsonError } = kit.intake(req, rawBody);
    const f = takeFault();
    if (!(await kit.beforeAnswer(req, res, f, responseDelayMs))) return;
    if (f?.kind === 'status') {
      const payload = f.body === undefined ? defaultErrorBodyForStatus(f.status) : f.body;
      const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
      const contentType = typeof payload === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
      const extra: Record<string, string> = f.status === 429 && !f.headers ? { 'retry-after': '1' } : {};
      res.writeHead(f.status, { ...commonHeaders(), 'content-type': contentType, ...extra, ...(f.headers ?? {}) });
      res.end(text);
      return;
    }

    if (!path.startsWith('/v1/')) throw notFoundUrlError(method, path);
    const auth = req.headers.authorization;
    const presented = auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length).trim() : undefined;
    if (presented !== apiKey) throw invalidApiKeyError(presented);
    if (MockOpenAIBatches.serves(path)) {
      const answer = await batches.answer(method, path, new URLSearchParams(req.url?.split('?')[1] ?? ''), req.headers['content-type'] ?? '', Buffer.from(rawBody, 'utf8'));
      if (answer.raw === undefined) return sendJson(res, answer.status, answer.body);
      res.writeHead(answer.status, { ...commonHeaders(), 'content-type': 'application/octet-stream', 'content-length': String(answer.raw.length) });
      res.end(answer.raw);
      return;
    }
    if (jsonError) throw invalidJsonError();

    if (method === 'POST' && path === '/v1/chat/completions') return handleChat(res, body ?? {}, f);
    if (method === 'POST' && path === '/v1/responses') return handleResponses(res, body, f);
    if (method === 'POST' && path === '/v1/responses/input_tokens') return sendJson(res, 200, answerInputTokens(body ?? {}, storedResponses, { strict: strictParams }));
    const storedMatch = /^\/v1\/responses\/([^/]+)$/.exec(path);
    if (storedMatch && (method === 'GET' || method === 'DELETE')) {
      const stored = storedResponses.get(storedMatch[1]!);
      if (stored === undefined) throw new MockHttpError(404, errorBody(`Response with id '${storedMatch[1]!}' not found.`, 'invalid_request_error', null, null));
      if (method === 'DELETE') storedResponses.delete(storedMatch[1]!);
      return sendJson(res, 200, method === 'GET' ? stored.response : { id: storedMatch[1], object: 'response', deleted: true });
    }
    if (method === 'POST' && path === '/v1/embeddings') return sendJson(res, 200, answerEmbeddings((body ?? {}) as Record<string, unknown>));
    if (method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, { object: 'list', data: models.map(modelObject) });
    }
    const modelMatch = /^\/v1\/models\/(.+)$/.exec(path);
    if (method === 'GET' && modelMatch) {
      const id = decodeURIComponent(modelMatch[1]!);
      if (!models.includes(id)) throw modelNotFoundError(id);
      return sendJson(res, 200, modelObject(id));
    }
    throw notFoundUrlError(method, path);
  };

  const { server, port } = await kit.listen({
    port: options.port,
    maxBodyBytes: MAX_BODY_BYTES,
    intercept: (req, res) => {
      if (!isOpenAIMediaRequest(req)) return false;
      serveOpenAIMedia(req, res, { apiKey, takeFault, requests: record ? requests : null, chunkDelayMs, origin: () => origin });
      return true;
    },
    handle,
    tooLarge: (_req, res) => sendJson(res, 413, errorBody('Request body too large.', 'invalid_request_error')),
    failed: (_req, res, err) => {
      if (err instanceof MockHttpError) sendError(res, err);
      else if (!res.headersSent) sendJson(res, 500, defaultErrorBodyForStatus(500));
      else res.destroy();
    },
  });
  const origin = `http://127.0.0.1:${port}`;
  serveResponsesWebSocket(server, { apiKey, answer: (body) => answerResponses(body, storedResponses, { strict: strictParams, usageOverride }) });

  return {
    url: `${origin}/v1`,
    origin,
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
