import type { IncomingMessage } from 'node:http';
import type WebSocket from 'ws';
import type { RawData } from 'ws';
import { webSocketModule } from './ws-module.js';
import type { Channel } from '../domain/records.js';
import type { UpstreamFailureClass } from '../routing/failure-class.js';
import { joinUrl, OPENAI_DEFAULT_BASE_URL } from '../upstreams/openai/openai-adapter.js';

/** Channel types whose upstream speaks the OpenAI Realtime protocol over WebSocket. */
export const REALTIME_CHANNEL_TYPES: ReadonlySet<string> = new Set(['openai', 'azure-openai']);

/** Azure's realtime API version for deployment URLs when the channel names none (its GA realtime needs one this new). */
const AZURE_REALTIME_API_VERSION = '2025-04-01-preview';

export interface RealtimeTarget {
  url: string;
  headers: Record<string, string>;
}

/** An http(s) base URL as the ws(s) one. */
function webSocketUrl(url: string): string {
  return url.replace(/^http(s?):/i, 'ws$1:');
}

/**
 * Where a channel's realtime WebSocket is and how to sign in: OpenAI's `<base>/realtime?model=<upstream model>` with a
 * Bearer key; Azure OpenAI's v1 API (`/openai/v1/realtime?model=<deployment>`) or its deployment form
 * (`/openai/realtime?api-version=…&deployment=<deployment>`), with the `api-key` header. Null for other channel types.
 */
export function realtimeTarget(channel: Channel, credential: string, upstreamModel: string, beta: string | null): RealtimeTarget | null {
  const extra: Record<string, string> = beta === null ? {} : { 'openai-beta': beta };
  if (channel.type === 'openai') {
    const url = new URL(webSocketUrl(joinUrl(channel.baseUrl ?? OPENAI_DEFAULT_BASE_URL, '/realtime')));
    url.searchParams.set('model', upstreamModel);
    return { url: url.toString(), headers: { ...channel.headers, ...extra, authorization: `Bearer ${credential}` } };
  }
  if (channel.type === 'azure-openai') {
    const base = webSocketUrl((channel.baseUrl ?? '').replace(/\/+$/, ''));
    const apiVersion = typeof channel.settings.api_version === 'string' ? channel.settings.api_version : AZURE_REALTIME_API_VERSION;
    const url = apiVersion === 'v1'
      ? `${base}/openai/v1/realtime?model=${encodeURIComponent(upstreamModel)}`
      : `${base}/openai/realtime?api-version=${encodeURIComponent(apiVersion)}&deployment=${encodeURIComponent(upstreamModel)}`;
    return { url, headers: { ...channel.headers, ...extra, 'api-key': credential } };
  }
  return null;
}

/** How opening an upstream realtime socket ended. */
export type UpstreamOpening =
  /** `early`: frames the upstream sent before the caller's side was ready (its `session.created`), in order. */
  | { kind: 'open'; socket: WebSocket; early: Array<{ data: RawData; binary: boolean }> }
  /** The upstream answered the handshake with an HTTP error that is the caller's own (a 4xx other than 401, 403, 408, 409, 429). */
  | { kind: 'refused'; status: number; body: Buffer }
  /** The next channel may try. */
  | { kind: 'failed'; failureClass: UpstreamFailureClass; status: number | null };

/** The most of an upstream's refusal body kept, to name its reason. */
const MAX_REFUSAL_BYTES = 16 * 1024;

function failureOfStatus(status: number): UpstreamFailureClass | null {
  if (status === 401 || status === 403) return 'credential';
  if (status === 429) return 'throttled';
  if (status === 408 || status === 409 || status >= 500) return 'server_error';
  return null;
}

/**
 * An exchange that opens a session after the handshake (Gemini Live's `setup`, answered by `setupComplete`): the
 * socket counts as open once `isReady` accepts a frame the upstream sent in answer to `first`.
 */
export interface OpeningExchange {
  first: string;
  isReady(data: RawData): boolean;
}

/**
 * What a close before the session opened means: the upstream refused our credential, is overloaded or failing (the
 * next channel may try), or refused what the caller asked (its reason goes back to the caller).
 */
function failureOfClose(code: number, reason: string): { failureClass: UpstreamFailureClass } | { status: number } {
  if ((code === 1007 || code === 1008) && /api.?key|credential|permission|unauthori[sz]ed|unauthenticated/i.test(reason)) return { failureClass: 'credential' };
  if (/quota|resource.?exhausted|rate.?limit/i.test(reason)) return { failureClass: 'throttled' };
  if (code === 1007 || code === 1008 || code === 1003 || code === 1009) return { status: 400 };
  return { failureClass: 'server_error' };
}

/**
 * Opens the upstream socket within `timeoutMs`, reading an HTTP refusal's body (bounded) to tell the caller why. With
 * an opening exchange, its first frame is sent once the handshake completes and the socket is open when the answer
 * comes (within the same time); a close before it is read as a refusal or a failure by its code and reason.
 */
export async function openUpstream(target: RealtimeTarget, options: { timeoutMs: number; maxPayload: number; exchange?: OpeningExchange }): Promise<UpstreamOpening> {
  const { default: WebSocket } = await webSocketModule.get();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (opening: UpstreamOpening): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(opening);
    };
    const socket = new WebSocket(target.url, {
      headers: target.headers,
      handshakeTimeout: options.timeoutMs,
      maxPayload: options.maxPayload,
      perMessageDeflate: false,
      followRedirects: false,
    });
    const timer = setTimeout(() => {
      finish({ kind: 'failed', failureClass: 'first_byte_timeout', status: null });
      socket.terminate();
    }, options.timeoutMs + 100);
    const early: Array<{ data: RawData; binary: boolean }> = [];
    const ready = (): void => {
      // Nothing more is read until the session takes the socket; what arrived with the opening is kept.
      socket.pause();
      finish({ kind: 'open', socket, early });
    };
    const { exchange } = options;
    socket.on('message', (data, binary) => {
      early.push({ data, binary });
      if (exchange !== undefined && !settled && exchange.isReady(data)) ready();
    });
    socket.once('open', () => {
      if (exchange === undefined) ready();
      else socket.send(exchange.first);
    });
    socket.once('close', (code, reason) => {
      if (settled) return;
      const text = reason.toString('utf8');
      const failure = failureOfClose(code, text);
      finish('status' in failure
        ? { kind: 'refused', status: failure.status, body: Buffer.from(JSON.stringify({ error: { message: text === '' ? `The upstream closed the session (code ${code}).` : text } })) }
        : { kind: 'failed', failureClass: failure.failureClass, status: null });
    });
    socket.once('unexpected-response', (_request, response: IncomingMessage) => {
      const status = response.statusCode ?? 502;
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        if (size < MAX_REFUSAL_BYTES) chunks.push(chunk);
        size += chunk.length;
      });
      const done = (): void => {
        const failureClass = failureOfStatus(status);
        finish(failureClass === null ? { kind: 'refused', status, body: Buffer.concat(chunks) } : { kind: 'failed', failureClass, status });
        socket.terminate();
      };
      response.once('end', done);
      response.once('error', done);
      response.once('aborted', done);
    });
    socket.once('error', (error: Error & { code?: string }) => {
      const timedOut = /timed out/i.test(error.message);
      finish({ kind: 'failed', failureClass: timedOut ? 'first_byte_timeout' : error.code === 'ECONNRESET' ? 'reset' : 'connect', status: null });
      socket.terminate();
    });
  });
}
