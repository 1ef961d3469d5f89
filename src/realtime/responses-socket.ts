import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import { openAIFamily } from '../codecs/openai-chat/family.js';
import type { RealtimeConfig } from '../config/realtime-config.js';
import { GatewayError, toGatewayError } from '../errors/gateway-error.js';
import { authenticate } from '../http/authenticate.js';
import { runInProcess, type InProcessAnswer } from '../http/in-process-request.js';
import type { RequestContext, RouteHandler } from '../http/request-context.js';
import type { GatewayServices } from '../services.js';
import { newId } from '../shared/ids.js';
import { describeError } from '../shared/logger.js';
import { assertCanPayAnything } from '../relay/admit-before-body.js';
import { EventStreamFrames } from './event-stream-frames.js';
import { CLOSE } from './realtime-events.js';
import { checkHandshake } from './realtime-endpoint.js';
import { loadOnce, type LoadOnce } from '../shared/load-once.js';
import { webSocketModule } from './ws-module.js';
import { openUpgrade, upgradeContext } from './socket-upgrade.js';

/** The Responses API's path: a WebSocket upgrade of it is the API's WebSocket mode. */
export const RESPONSES_SOCKET_PATH = '/v1/responses';
/** How often a response waiting for the caller to read is checked for the caller's queue having drained. */
const DRAIN_POLL_MS = 20;
/** Request headers that belong to the WebSocket handshake, not to the responses made on it. */
const HANDSHAKE_HEADERS = /^(?:host|connection|upgrade|content-length|content-type|transfer-encoding|sec-websocket-.*)$/;

/** The `error` event of the WebSocket mode: `{type: "error", status, error: {type, code, message, param}}`. */
function errorEvent(status: number, error: Record<string, unknown>, streamId: string | undefined): string {
  return JSON.stringify({ type: 'error', status, error, ...(streamId === undefined ? {} : { stream_id: streamId }) });
}

function gatewayErrorEvent(error: GatewayError, streamId: string | undefined): string {
  const body = JSON.parse(openAIFamily.encodeError(error)) as { error?: Record<string, unknown> };
  return errorEvent(error.status, body.error ?? { message: error.message }, streamId);
}

/** A JSON text frame's event, or null when it is not a JSON object with a string `type`. */
function readEvent(data: RawData, binary: boolean): Record<string, unknown> & { type: string } | null {
  if (binary) return null;
  try {
    const event: unknown = JSON.parse((Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString('utf8'));
    if (typeof event !== 'object' || event === null || Array.isArray(event) || typeof (event as { type?: unknown }).type !== 'string') return null;
    return event as Record<string, unknown> & { type: string };
  } catch {
    return null;
  }
}

/**
 * The Responses API's WebSocket mode, `wss://<gateway>/v1/responses`: the key is checked at the handshake, and a
 * caller who can pay for nothing at all is refused there (an HTTP answer with the spec's error object); then each `response.create` event (the body of `POST
 * /v1/responses` without `stream`, plus an optional `stream_id` lane) runs through the API's own Responses route in
 * process, streamed: the same admission (allowlist, money, concurrency, windows), routing to any model (translated
 * for other families), one settlement and one usage row per response, as a streamed `POST /v1/responses`. Its
 * events go to the caller as JSON text frames (with the lane's `stream_id`); a refusal is an `error` event with the
 * HTTP status. Responses of one lane run in order, lanes side by side. The key is checked again for every response,
 * so revoking it stops the next one. A caller that does not read holds back the response's upstream (at most
 * REALTIME_BUFFER_BYTES queued); an idle connection and one past REALTIME_MAX_SESSION_SECONDS are closed.
 */
export class ResponsesSocketEndpoint {
  /** The WebSocket server, made at the first connection: a gateway nobody connects to never loads the library. */
  readonly #server: LoadOnce<WebSocketServer>;
  readonly #connections = new Set<ResponsesConnection>();
  readonly #extraHeaders = new WeakMap<IncomingMessage, Record<string, string>>();
  #draining = false;

  constructor(
    private readonly services: GatewayServices,
    private readonly config: RealtimeConfig,
    private readonly responsesRoute: RouteHandler,
  ) {
    this.#server = loadOnce(async () => {
      const { WebSocketServer } = await webSocketModule.get();
      const server = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: config.maxMessageBytes });
      server.on('headers', (headers, request) => {
        for (const [name, value] of Object.entries(this.#extraHeaders.get(request) ?? {})) headers.push(`${name}: ${value}`);
      });
      return server;
    });
  }

  /** Whether an upgrade of `url` is the Responses API's WebSocket mode. */
  serves(url: string): boolean {
    const queryAt = url.indexOf('?');
    return (queryAt < 0 ? url : url.slice(0, queryAt)) === RESPONSES_SOCKET_PATH;
  }

  get connections(): number {
    return this.#connections.size;
  }

  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const context = upgradeContext(this.services, request, socket, () => openAIFamily);
    openUpgrade(this.services, context, socket, () => this.#open(context, socket, head), 'responses websocket upgrade failed');
  }

  /** No new connection or response is taken; each connection closes (1001) once its responses are done, by `deadlineMs`. */
  drain(deadlineMs: number): void {
    this.#draining = true;
    for (const connection of this.#connections) connection.drain(deadlineMs);
  }

  closeAll(): void {
    this.drain(0);
  }

  async #open(context: RequestContext, socket: Duplex, head: Buffer): Promise<void> {
    if (context.method !== 'GET') throw new GatewayError('method_not_allowed', `Method ${context.method} is not allowed on the WebSocket of ${RESPONSES_SOCKET_PATH}.`);
    checkHandshake(context.request, context.path);
    if (this.#draining) throw new GatewayError('overloaded', 'This gateway instance is restarting and takes no new connections; connect again.', { retryAfterSeconds: 1 });
    const server = await this.#server.get();
    const { key, account } = await authenticate(context, this.services);
    // Admission at connect: a caller who can pay for nothing is refused before the handshake completes.
    await assertCanPayAnything(this.services, { key, account, kind: 'chat' });
    context.response.detachSocket(socket as never);
    this.#extraHeaders.set(context.request, { 'x-request-id': context.requestId });
    const client = await new Promise<WebSocket>((resolve) => server.handleUpgrade(context.request, socket, head, resolve));
    const connection = new ResponsesConnection(client, context, this.services, this.config, this.responsesRoute, (ended) => this.#connections.delete(ended));
    this.#connections.add(connection);
    if (this.#draining) connection.drain(0);
  }
}

/** One caller's WebSocket of the Responses API: its lanes, its responses in flight and its limits. */
class ResponsesConnection {
  /** The last response queued on each lane (`''`: the lane of events without `stream_id`). */
  readonly #lanes = new Map<string, Promise<void>>();
  readonly #inFlight = new Set<AbortController>();
  readonly #timers: NodeJS.Timeout[] = [];
  #lastActivity = performance.now();
  #alive = true;
  #draining = false;
  #closed = false;
  readonly #headers: Record<string, string> = {};

  constructor(
    private readonly socket: WebSocket,
    private readonly context: RequestContext,
    private readonly services: GatewayServices,
    private readonly config: RealtimeConfig,
    private readonly route: RouteHandler,
    private readonly onClosed: (connection: ResponsesConnection) => void,
  ) {
    for (const [name, value] of Object.entries(context.request.headers)) {
      if (typeof value === 'string' && !HANDSHAKE_HEADERS.test(name)) this.#headers[name] = value;
    }
    socket.on('error', (error) => services.logger.debug('responses websocket error', describeError(error)));
    socket.on('message', (data, binary) => this.#message(data, binary));
    socket.on('pong', () => (this.#alive = true));
    socket.on('close', () => this.#finish());
    this.#timers.push(setInterval(() => this.#tick(), Math.min(config.pingMs, 1000)));
    this.#timers.push(setTimeout(() => this.#close(CLOSE.normal, 'connection reached its maximum duration'), config.maxSessionMs));
    this.#timers.push(setInterval(() => {
      if (!this.#alive) {
        socket.terminate();
        return;
      }
      this.#alive = false;
      socket.ping();
    }, config.pingMs));
  }

  /** Takes no further `response.create`; closes with 1001 once the responses in flight end, at the latest by `deadlineMs`. */
  drain(deadlineMs: number): void {
    this.#draining = true;
    if (this.#inFlight.size === 0) {
      this.#close(CLOSE.goingAway, 'gateway restarting');
      return;
    }
    this.#timers.push(setTimeout(() => {
      for (const controller of this.#inFlight) controller.abort();
      this.#close(CLOSE.goingAway, 'gateway restarting');
    }, Math.max(0, deadlineMs)));
  }

  #message(data: RawData, binary: boolean): void {
    this.#lastActivity = performance.now();
    const event = readEvent(data, binary);
    if (event === null) {
      this.#send(errorEvent(400, { type: 'invalid_request_error', code: 'invalid_event', message: 'Each message must be a JSON object with a string "type", such as {"type": "response.create", …}.', param: null }, undefined));
      return;
    }
    const streamId = typeof event.stream_id === 'string' ? event.stream_id : undefined;
    if (event.type !== 'response.create') {
      const served = event.type === 'response.steer' ? "'response.steer' is not served by this gateway" : `Unknown event type '${event.type}'`;
      this.#send(errorEvent(400, { type: 'invalid_request_error', code: 'invalid_event', message: `${served}: send 'response.create'.`, param: 'type' }, streamId));
      return;
    }
    if (this.#draining) {
      this.#send(gatewayErrorEvent(new GatewayError('overloaded', 'This gateway instance is restarting and takes no new responses; reconnect to continue.', { retryAfterSeconds: 1 }), streamId));
      return;
    }
    const lane = streamId ?? '';
    const previous = this.#lanes.get(lane) ?? Promise.resolve();
    const next = previous.then(() => this.#respond(event, streamId)).catch((error: unknown) => {
      this.services.logger.error('responses websocket response failed', describeError(error));
    });
    this.#lanes.set(lane, next);
    void next.then(() => {
      if (this.#lanes.get(lane) === next) this.#lanes.delete(lane);
    });
  }

  /** Runs one `response.create` through the Responses route, streaming its events to the caller. */
  async #respond(event: Record<string, unknown>, streamId: string | undefined): Promise<void> {
    if (this.#closed) return;
    const { type: _type, stream_id: _streamId, stream: _stream, ...body } = event;
    if (body.background === true) {
      this.#send(errorEvent(400, { type: 'invalid_request_error', code: 'unsupported_parameter', message: "'background' is not supported over WebSocket.", param: 'background' }, streamId));
      return;
    }
    const controller = new AbortController();
    this.#inFlight.add(controller);
    try {
      // The key is checked for every response: one revoked or disabled since the connection opened stops here.
      const caller = await authenticate({ ...this.context, inProcess: undefined } as RequestContext, this.services);
      const frames = new EventStreamFrames();
      const refusal: Buffer[] = [];
      const answer = await runInProcess({
        handler: this.route,
        family: openAIFamily,
        path: RESPONSES_SOCKET_PATH,
        requestId: newId('req'),
        caller,
        body: JSON.stringify({ ...body, stream: true }),
        headers: this.#headers,
        clientIp: this.context.clientIp,
        signal: controller.signal,
        onChunk: async (chunk: Buffer, head: InProcessAnswer) => {
          if (head.status !== 200 || !(head.headers['content-type'] ?? '').includes('text/event-stream')) {
            refusal.push(chunk);
            return;
          }
          for (const data of frames.push(chunk)) await this.#forward(data, streamId);
        },
      });
      const refused = Buffer.concat([...refusal, answer.body]);
      if (refused.length > 0 && answer.status !== 200) {
        let error: Record<string, unknown> = { type: 'server_error', code: null, message: `The response failed with status ${answer.status}.`, param: null };
        try {
          const parsed = JSON.parse(refused.toString('utf8')) as { error?: Record<string, unknown> };
          if (parsed.error !== undefined) error = parsed.error;
        } catch {
          // Not JSON: the generic error above.
        }
        this.#send(errorEvent(answer.status, error, streamId));
      }
    } catch (thrown) {
      this.#send(gatewayErrorEvent(toGatewayError(thrown), streamId));
    } finally {
      this.#inFlight.delete(controller);
      this.#lastActivity = performance.now();
      if (this.#draining && this.#inFlight.size === 0) this.#close(CLOSE.goingAway, 'gateway restarting');
    }
  }

  /** One event of the stream to the caller, with its lane; waits while the caller's queue is over the bound. */
  async #forward(data: string, streamId: string | undefined): Promise<void> {
    let frame = data;
    if (streamId !== undefined && data.startsWith('{')) {
      try {
        frame = JSON.stringify({ ...(JSON.parse(data) as Record<string, unknown>), stream_id: streamId });
      } catch {
        return;
      }
    }
    this.#send(frame);
    // A caller gone meanwhile ends the wait: its response is aborted as it closed.
    while (this.socket.readyState === this.socket.OPEN && this.socket.bufferedAmount > this.config.bufferBytes) {
      await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
    }
  }

  #send(frame: string): void {
    this.#lastActivity = performance.now();
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(frame);
  }

  #tick(): void {
    if (this.#inFlight.size === 0 && performance.now() - this.#lastActivity >= this.config.idleMs) this.#close(CLOSE.normal, 'idle timeout');
  }

  #close(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING) this.socket.close(code, reason);
    const grace = setTimeout(() => this.socket.terminate(), 3000);
    grace.unref();
    this.socket.once('close', () => clearTimeout(grace));
  }

  /** The caller is gone: the responses in flight see their caller leave (billed for what they used), timers stop. */
  #finish(): void {
    this.#closed = true;
    for (const controller of this.#inFlight) controller.abort();
    for (const timer of this.#timers) clearTimeout(timer);
    this.onClosed(this);
  }
}
