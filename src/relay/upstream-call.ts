import { GatewayError } from '../errors/gateway-error.js';
import type { ChannelRoute } from '../routing/catalog.js';
import type { RoutePlan } from '../routing/route-plan.js';
import type { UpstreamFailureClass } from '../routing/failure-class.js';
import { UpstreamConnectionError } from '../upstreams/upstream-exchange.js';
import type { UpstreamAdapter, UpstreamBody, UpstreamErrorClass, UpstreamRequest, UpstreamResponse, UpstreamTimeouts } from '../upstreams/upstream-adapter.js';
import { isRetryableUpstreamStatus, isUpstreamCredentialFailure } from './upstream-error.js';
import type { CallerSignal } from './caller-signal.js';

const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** The longest Retry-After honoured (an upstream asking for a day is capped to an hour of skipping). */
const MAX_RETRY_AFTER_MS = 3_600_000;

export function timeoutsOf(route: ChannelRoute, stream: boolean): UpstreamTimeouts {
  const settings = route.channel.settings;
  const read = (name: string, fallback: number): number => (typeof settings[name] === 'number' && (settings[name] as number) > 0 ? (settings[name] as number) : fallback);
  return { firstByteMs: read('first_byte_timeout_ms', stream ? 120_000 : 600_000), idleMs: read('idle_timeout_ms', 120_000) };
}

/** What one upstream call came to, before anything reached the caller. */
export type UpstreamOutcome =
  | { kind: 'response'; response: UpstreamResponse }
  /** Worth another channel. */
  | { kind: 'retry'; failureClass: UpstreamFailureClass; retryAfterMs: number | null; status: number | null }
  /** The upstream refused the request itself (4xx): the caller's problem, relayed. */
  | { kind: 'refused'; status: number; body: Buffer }
  | { kind: 'aborted' };

/**
 * The class of a transport failure. `inBody`: it happened while reading an answer whose head had arrived, so a
 * reset is a cut answer, not an unreachable host.
 */
export function failureClassOf(error: unknown, inBody: boolean): UpstreamFailureClass {
  if (!(error instanceof UpstreamConnectionError)) return 'bad_response';
  switch (error.kind) {
    case 'connect':
      return inBody ? 'cut' : 'connect';
    case 'first-byte-timeout':
      return 'first_byte_timeout';
    case 'idle-timeout':
      return 'idle_timeout';
    case 'reset':
    case 'aborted':
      return inBody ? 'cut' : 'reset';
    default: {
      const unknown: never = error.kind;
      throw new Error(`unknown failure kind ${String(unknown)}`);
    }
  }
}

const TIMEOUTS: ReadonlySet<UpstreamFailureClass> = new Set(['first_byte_timeout', 'idle_timeout']);

/**
 * The caller-facing error for an upstream failure: 502 `upstream_error`, timeouts included.
 * It never carries the upstream's URL, key or body; the message says only what kind of failure it was.
 */
export function upstreamFailureError(failureClass: UpstreamFailureClass): GatewayError {
  const message = TIMEOUTS.has(failureClass)
    ? 'The upstream provider did not answer in time.'
    : failureClass === 'cut' || failureClass === 'stream_error'
      ? 'The upstream provider stopped answering mid-response.'
      : 'The upstream provider failed to answer.';
  return new GatewayError('upstream_error', message, { status: 502 });
}

/** One failed attempt of a request, for the answer when the pool is exhausted. */
export interface FailedAttempt {
  failureClass: UpstreamFailureClass;
  retryAfterMs: number | null;
}

/**
 * The answer when every attempt failed: 503 with Retry-After when every attempt was throttled (the smallest
 * Retry-After the upstreams gave, at least 1 s), otherwise 502. Both carry error code `upstream_error`.
 */
export function poolExhaustedError(failures: readonly FailedAttempt[], budgetSpent: boolean): GatewayError {
  const tried = failures.length === 1 ? 'the one channel tried' : `all ${failures.length} channels tried`;
  if (failures.length > 0 && failures.every((failure) => failure.failureClass === 'throttled')) {
    const retryAfterMs = Math.min(...failures.map((failure) => failure.retryAfterMs ?? 1000));
    return new GatewayError('upstream_error', `The upstream providers are throttling this model (${tried}). Retry after the indicated time.`, {
      status: 503,
      retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
    });
  }
  const last = failures.at(-1)?.failureClass;
  const what = last !== undefined && TIMEOUTS.has(last) ? 'did not answer in time' : 'failed to answer';
  const budget = budgetSpent ? ' before the retry time budget ran out' : '';
  return new GatewayError('upstream_error', `The upstream provider ${what}; ${tried}${budget}.`, { status: 502 });
}

/**
 * The answer when a route plan ended without an answer: 429 when nothing was tried because every channel-model was
 * over its own limit, 503 when nothing could be tried at all, else the pool-exhausted 502/503.
 */
export function exhaustedError(plan: RoutePlan, failures: readonly FailedAttempt[], model: string): GatewayError {
  const exhaustion = plan.exhaustion;
  if (failures.length > 0) return poolExhaustedError(failures, exhaustion.kind === 'budget');
  if (exhaustion.kind === 'limited') {
    const seconds = Math.max(1, Math.ceil(exhaustion.retryAfterMs / 1000));
    return new GatewayError('rate_limit_exceeded', `Every upstream channel of model '${model}' is at its rate limit. Retry after ${seconds} s.`, { retryAfterSeconds: seconds });
  }
  return new GatewayError('upstream_unavailable', `No upstream channel is available for model '${model}'.`, { retryAfterSeconds: 1 });
}

/** An upstream answer's whole body (one chunk as it came, several joined): one promise where the transport has it. */
export function readWholeBody(body: UpstreamBody): Promise<Buffer> {
  return body.whole !== undefined ? body.whole() : joinChunks(body);
}

async function joinChunks(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

/** Reads (a bounded part of) an upstream error body. */
async function readErrorBody(response: UpstreamResponse, signal: CallerSignal): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      if (size < MAX_ERROR_BODY_BYTES) chunks.push(chunk);
      size += chunk.length;
    }
  } catch {
    if (signal.aborted) return null;
  }
  return Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY_BYTES);
}

function classifyByStatus(status: number): UpstreamErrorClass {
  if (isUpstreamCredentialFailure(status)) return 'credential';
  return isRetryableUpstreamStatus(status) ? 'retryable' : 'caller';
}

function header(headers: UpstreamResponse['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as an HTTP date; null when absent or unreadable. */
export function retryAfterMsOf(headers: UpstreamResponse['headers'], now: number): number | null {
  const milliseconds = Number(header(headers, 'retry-after-ms'));
  let value: number | null = null;
  if (Number.isFinite(milliseconds) && milliseconds >= 0 && header(headers, 'retry-after-ms') !== undefined) value = milliseconds;
  const raw = header(headers, 'retry-after')?.trim();
  if (value === null && raw !== undefined && raw !== '') {
    if (/^\d+(\.\d+)?$/.test(raw)) value = Number(raw) * 1000;
    else {
      const date = Date.parse(raw);
      if (!Number.isNaN(date)) value = Math.max(0, date - now);
    }
  }
  return value === null ? null : Math.min(MAX_RETRY_AFTER_MS, Math.round(value));
}

function failureClassOfAnswer(errorClass: UpstreamErrorClass, status: number): UpstreamFailureClass {
  if (status === 429) return 'throttled';
  switch (errorClass) {
    case 'credential':
      return 'credential';
    case 'channel':
      return 'unavailable';
    case 'retryable':
    case 'caller':
      return 'server_error';
    default: {
      const unknown: never = errorClass;
      throw new Error(`unknown error class ${String(unknown)}`);
    }
  }
}

/**
 * Sends one request: the transport's promise of the response head. `traceHeaders` (W3C `traceparent`, `tracestate`)
 * are added here, the one path every upstream call takes, before any signing. A transport that throws instead of
 * rejecting gives its error as the promise's.
 */
export function sendUpstream(
  adapter: UpstreamAdapter,
  route: ChannelRoute,
  request: UpstreamRequest,
  options: { signal: CallerSignal; timeouts: UpstreamTimeouts; traceHeaders?: Record<string, string> | null },
): Promise<UpstreamResponse> {
  const traceHeaders = options.traceHeaders ?? null;
  const sent = traceHeaders === null ? request : { ...request, headers: Object.assign({}, request.headers, traceHeaders) };
  try {
    return adapter.transport(route.channel).send(sent, { signal: options.signal, timeouts: options.timeouts });
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * What a call whose head arrived came to: success below 400; otherwise its error body is read (a promise, the only
 * one here) and sorted into retry or refusal.
 */
export function answeredOutcome(adapter: UpstreamAdapter, response: UpstreamResponse, signal: CallerSignal, now: number): UpstreamOutcome | Promise<UpstreamOutcome> {
  if (response.status < 400) return { kind: 'response', response };
  return errorOutcome(adapter, response, signal, now);
}

/** What a call that failed before its head came to: the caller left, or a failure worth another channel. */
export function unansweredOutcome(error: unknown, signal: CallerSignal): UpstreamOutcome {
  if (signal.aborted) return { kind: 'aborted' };
  return { kind: 'retry', failureClass: failureClassOf(error, false), retryAfterMs: null, status: null };
}

async function errorOutcome(adapter: UpstreamAdapter, response: UpstreamResponse, signal: CallerSignal, now: number): Promise<UpstreamOutcome> {
  const body = await readErrorBody(response, signal);
  if (body === null) return { kind: 'aborted' };
  const errorClass = adapter.classifyError?.(response.status, body) ?? classifyByStatus(response.status);
  if (errorClass === 'caller') return { kind: 'refused', status: response.status, body };
  const failureClass = failureClassOfAnswer(errorClass, response.status);
  return { kind: 'retry', failureClass, retryAfterMs: failureClass === 'throttled' ? retryAfterMsOf(response.headers, now) : null, status: response.status };
}

/** What a sent request came to: its head's outcome, or its failure's. */
export async function outcomeOfSent(sent: Promise<UpstreamResponse>, adapter: UpstreamAdapter, signal: CallerSignal, now: number): Promise<UpstreamOutcome> {
  let response: UpstreamResponse;
  try {
    response = await sent;
  } catch (error) {
    return unansweredOutcome(error, signal);
  }
  return answeredOutcome(adapter, response, signal, now);
}

/** Sends one request and sorts the answer into success, retry, refusal or caller abort (see `sendUpstream`). */
export function callUpstream(
  adapter: UpstreamAdapter,
  route: ChannelRoute,
  request: UpstreamRequest,
  options: { signal: CallerSignal; timeouts: UpstreamTimeouts; now: number; traceHeaders?: Record<string, string> | null },
): Promise<UpstreamOutcome> {
  return outcomeOfSent(sendUpstream(adapter, route, request, options), adapter, options.signal, options.now);
}
