/**
 * A faithful mock of the Anthropic Messages API as an upstream of the gateway: a real node:http server on
 * 127.0.0.1 speaking Anthropic's wire format (messages, streaming SSE with the real event sequence, tool use,
 * extended thinking with signatures, prompt-caching usage, count_tokens, models, errors), recording every request
 * and able to inject faults.
 *
 *   const mock = await startMockAnthropicUpstream();
 *   new Anthropic({ baseURL: mock.url, apiKey: 'sk-ant-upstream-test' });
 *   mock.setFault({ kind: 'status', status: 529, times: 1 });
 *   await mock.close();
 *
 * Authentication: `x-api-key` or `Authorization: Bearer` with the key (the official SDK sends the latter);
 * `anthropic-version` is required. Validation rules: mock-anthropic-upstream-validate.ts; answer rules:
 * mock-anthropic-upstream-responses.ts. Model ids starting with `unknown-` answer 404 not_found_error.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MockAnthropicBatches } from './mock-anthropic-batches.js';
import { buildMessage, buildStreamEvents, buildUsage, countInput, planAnswer } from './mock-anthropic-upstream-responses.js';
import { MID_CONVERSATION_SYSTEM_BETA, takesSystemMessagesNatively, validateMessagesRequest, type MessagesRequest } from './mock-anthropic-upstream-validate.js';
import { DEFAULT_MODELS, defaultFaultError, invalidRequest, MockAnthropicError, modelInfo, requestId, type AnthropicErrorType } from './mock-anthropic-upstream-wire.js';
import { cutConnection, MockServerKit, writeWithBackpressure, type CommonFault, type RecordedRequest } from './mock-server-kit.js';

export { estimateTokens, splitIntoTokens, signThinking, DEFAULT_MODELS } from './mock-anthropic-upstream-wire.js';

export type { RecordedRequest } from './mock-server-kit.js';

export type MockFault =
  | CommonFault
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string>; times?: number }
  /** end the connection after N SSE events (non-streaming: after half the body) */
  | { kind: 'cut-stream'; afterEvents: number; times?: number }
  /** stream N events, then Anthropic's `event: error` (default overloaded_error) and end, as the API does mid-stream */
  | { kind: 'stream-error'; afterEvents: number; error?: { type: AnthropicErrorType; message: string }; times?: number };

export interface MockAnthropicUpstreamOptions {
  /** key expected in `x-api-key` or `Authorization: Bearer` (default sk-ant-upstream-test) */
  apiKey?: string;
  /** pause between streamed events (default 0) */
  chunkDelayMs?: number;
  /** pause before every answer (default 0) */
  responseDelayMs?: number;
  port?: number;
  /** models of GET /v1/models (messages accept any model id except `unknown-*`) */
  models?: string[];
  /** reject consecutive same-role turns (default true; today's API merges them, see the validate module) */
  requireAlternation?: boolean;
  /** smallest cacheable prefix in tokens (default 1024, Anthropic's minimum for most models) */
  minCacheTokens?: number;
  /** keep requests in `requests` (default true) */
  recordRequests?: boolean;
  /** pause before each request of a Message Batch runs (default 0) */
  batchLineDelayMs?: number;
  /** pause between creating a Message Batch and answering its creation (default 0) */
  batchCreateHoldMs?: number;
}

export interface MockAnthropicUpstream {
  /** The SDK's baseURL, e.g. http://127.0.0.1:PORT (the SDK adds /v1/messages) */
  url: string;
  origin: string;
  port: number;
  requests: RecordedRequest[];
  /** the Message Batches API's state: batches by id, their requests and results */
  batches: MockAnthropicBatches;
  /** applies to subsequent requests; faults with `times` clear themselves after that many requests */
  setFault(fault: MockFault | null): void;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;

function modelOf(body: unknown): string {
  return typeof body === 'object' && body !== null && typeof (body as { model?: unknown }).model === 'string' ? (body as { model: string }).model : '';
}

export async function startMockAnthropicUpstream(options: MockAnthropicUpstreamOptions = {}): Promise<MockAnthropicUpstream> {
  const apiKey = options.apiKey ?? 'sk-ant-upstream-test';
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const responseDelayMs = options.responseDelayMs ?? 0;
  const models = options.models ?? [...DEFAULT_MODELS];
  const requireAlternation = options.requireAlternation ?? true;
  const minCacheTokens = options.minCacheTokens ?? 1024;
  const record = options.recordRequests ?? true;

  const kit = new MockServerKit<MockFault>(record);
  let origin = '';
  const batches = new MockAnthropicBatches({
    origin: () => origin, apiKey,
    ...(options.batchLineDelayMs === undefined ? {} : { lineDelayMs: options.batchLineDelayMs }),
    ...(options.batchCreateHoldMs === undefined ? {} : { createHoldMs: options.batchCreateHoldMs }),
  });
  const { requests } = kit;
  const sleep = (ms: number): Promise<void> => kit.sleep(ms);
  const cache = new Set<string>();
  /** Anthropic's request-id, one per request, also on the answers to bodies that were too large or failed. */
  const ids = new WeakMap<IncomingMessage, string>();
  const idOf = (req: IncomingMessage): string => {
    let id = ids.get(req);
    if (id === undefined) ids.set(req, (id = requestId()));
    return id;
  };

  const sendJson = (res: ServerResponse, status: number, body: unknown, id: string, extra: Record<string, string> = {}): void => {
    if (res.destroyed || res.headersSent) return;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, {
      'request-id': id,
      'anthropic-organization-id': 'mock-org',
      'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      ...extra,
    });
    res.end(text);
  };

  const writeEvent = (res: ServerResponse, event: string, data: unknown): Promise<void> | undefined =>
    writeWithBackpressure(res, `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

  /** Simulated prompt caching: a prefix up to a cache_control breakpoint, written once, then read. */
  const inputUsage = (request: MessagesRequest): { noCache: number; cacheRead: number; cacheWrite: number } => {
    const { total, cachePrefix, cacheKey } = countInput(request);
    if (cachePrefix < minCacheTokens) return { noCache: total, cacheRead: 0, cacheWrite: 0 };
    if (cache.has(cacheKey)) return { noCache: total - cachePrefix, cacheRead: cachePrefix, cacheWrite: 0 };
    if (cache.size > 50_000) cache.clear();
    cache.add(cacheKey);
    return { noCache: total - cachePrefix, cacheRead: 0, cacheWrite: cachePrefix };
  };

  const handleMessages = async (res: ServerResponse, body: unknown, id: string, f: MockFault | null, betas: readonly string[]): Promise<void> => {
    const request = validateMessagesRequest(body, { countTokens: false, requireAlternation, midConversationSystem: betas.includes(MID_CONVERSATION_SYSTEM_BETA) || takesSystemMessagesNatively(modelOf(body)) });
    if (request.model.startsWith('unknown-')) throw new MockAnthropicError(404, 'not_found_error', `model: ${request.model}`);
    const plan = planAnswer(request);
    const usage = buildUsage(inputUsage(request), plan);
    const message = buildMessage(request, plan, usage);
    if (!request.stream) {
      if (f?.kind === 'cut-stream' || f?.kind === 'stream-error') {
        const text = JSON.stringify(message);
        res.writeHead(200, { 'request-id': id, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
        res.write(text.slice(0, Math.floor(text.length / 2)));
        cutConnection(res);
        return;
      }
      sendJson(res, 200, message, id);
      return;
    }
    const events = buildStreamEvents(message, plan, usage);
    res.writeHead(200, { 'request-id': id, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (let index = 0; index <= events.length; index++) {
      if (res.destroyed || kit.closing) return;
      if (f?.kind === 'cut-stream' && f.afterEvents === index) return cutConnection(res);
      if (f?.kind === 'stream-error' && f.afterEvents === index) {
        await writeEvent(res, 'error', { type: 'error', error: f.error ?? { type: 'overloaded_error', message: 'Overloaded' } });
        res.end();
        return;
      }
      if (index === events.length) break;
      const event = events[index]!;
      const pending = writeEvent(res, event.event, event.data);
      if (pending) await pending;
      if (chunkDelayMs > 0 && index < events.length - 1) await sleep(chunkDelayMs);
    }
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, rawBody: string): Promise<void> => {
    const id = idOf(req);
    const { method, path, body, jsonError } = kit.intake(req, rawBody);
    const f = kit.takeFault();
    if (!(await kit.beforeAnswer(req, res, f, responseDelayMs))) return;
    if (f?.kind === 'status') {
      const error = defaultFaultError(f.status);
      sendJson(res, f.status, f.body ?? error.body(id), id, { ...error.headers, ...(f.headers ?? {}) });
      return;
    }

    if (!path.startsWith('/v1/')) throw new MockAnthropicError(404, 'not_found_error', `Not Found: ${method} ${path}`);
    const bearer = req.headers.authorization?.startsWith('Bearer ') ? req.headers.authorization.slice(7).trim() : undefined;
    const presented = (req.headers['x-api-key'] as string | undefined) ?? bearer;
    if (presented === undefined || presented === '') throw new MockAnthropicError(401, 'authentication_error', 'x-api-key header is required');
    if (presented !== apiKey) throw new MockAnthropicError(401, 'authentication_error', 'invalid x-api-key');
    const version = req.headers['anthropic-version'];
    if (version === undefined || version === '') throw invalidRequest('anthropic-version: header is required');
    if (typeof version !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(version)) throw invalidRequest(`anthropic-version: invalid version '${String(version)}'`);
    if (jsonError) throw invalidRequest('There was an issue with the format or content of your request: the body is not valid JSON.');

    const betasHeader = req.headers['anthropic-beta'];
    const betas = (Array.isArray(betasHeader) ? betasHeader.join(',') : betasHeader ?? '').split(',').map((beta) => beta.trim());
    if (method === 'POST' && path === '/v1/messages') return handleMessages(res, body, id, f, betas);
    if (MockAnthropicBatches.serves(path)) {
      const answer = await batches.answer(method, path, new URLSearchParams(req.url?.split('?')[1] ?? ''), body);
      if (answer.jsonl === undefined) return sendJson(res, answer.status, answer.body, id);
      if (res.destroyed) return;
      res.writeHead(answer.status, { 'request-id': id, 'content-type': 'application/binary', 'content-length': String(Buffer.byteLength(answer.jsonl)) });
      res.end(answer.jsonl);
      return;
    }
    if (method === 'POST' && path === '/v1/messages/count_tokens') {
      const request = validateMessagesRequest(body, { countTokens: true, requireAlternation, midConversationSystem: betas.includes(MID_CONVERSATION_SYSTEM_BETA) || takesSystemMessagesNatively(modelOf(body)) });
      if (request.model.startsWith('unknown-')) throw new MockAnthropicError(404, 'not_found_error', `model: ${request.model}`);
      return sendJson(res, 200, { input_tokens: countInput(request).total }, id);
    }
    if (method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, { data: models.map(modelInfo), has_more: false, first_id: models[0] ?? null, last_id: models.at(-1) ?? null }, id);
    }
    const modelMatch = /^\/v1\/models\/(.+)$/.exec(path);
    if (method === 'GET' && modelMatch) {
      const model = decodeURIComponent(modelMatch[1]!);
      if (!models.includes(model)) throw new MockAnthropicError(404, 'not_found_error', `model: ${model}`);
      return sendJson(res, 200, modelInfo(model), id);
    }
    throw new MockAnthropicError(404, 'not_found_error', `Not Found: ${method} ${path}`);
  };

  const { port } = await kit.listen({
    port: options.port,
    maxBodyBytes: MAX_BODY_BYTES,
    handle,
    tooLarge: (req, res) => sendJson(res, 413, defaultFaultError(413).body(idOf(req)), idOf(req)),
    failed: (req, res, error) => {
      const id = idOf(req);
      if (error instanceof MockAnthropicError) sendJson(res, error.status, error.body(id), id, error.headers);
      else if (!res.headersSent) sendJson(res, 500, defaultFaultError(500).body(id), id);
      else res.destroy();
    },
  });
  origin = `http://127.0.0.1:${port}`;

  return {
    url: origin,
    origin,
    port,
    requests,
    batches,
    setFault: (next) => kit.setFault(next),
    close: () => {
      batches.close();
      return kit.close();
    },
  };
}
