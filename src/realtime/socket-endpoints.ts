import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RealtimeConfig } from '../config/realtime-config.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RouteHandler } from '../http/request-context.js';
import type { GatewayServices } from '../services.js';
import { loadOnce, type LoadOnce } from '../shared/load-once.js';
import { describeError } from '../shared/logger.js';
import type { RealtimeEndpoint } from './realtime-endpoint.js';
import type { ResponsesSocketEndpoint } from './responses-socket.js';

interface Endpoints {
  realtime: RealtimeEndpoint;
  responses: ResponsesSocketEndpoint;
}

/**
 * The API listener's WebSocket upgrades: realtime sessions (OpenAI Realtime, Gemini Live) and the Responses API's
 * WebSocket mode. Their modules are loaded at the first upgrade (an instance nobody opens a socket to never loads
 * them; upgrades arriving meanwhile wait for the same load), then every upgrade goes straight to its endpoint. A
 * drain or stop before the load leaves the endpoints made after it taking no connection.
 */
export class SocketEndpoints {
  readonly #endpoints: LoadOnce<Endpoints>;
  #stopped = false;

  constructor(
    private readonly services: GatewayServices,
    config: RealtimeConfig,
    responsesRoute: RouteHandler,
  ) {
    this.#endpoints = loadOnce(async () => {
      const [{ RealtimeEndpoint }, { ResponsesSocketEndpoint }] = await Promise.all([import('./realtime-endpoint.js'), import('./responses-socket.js')]);
      const endpoints = { realtime: new RealtimeEndpoint(services, config), responses: new ResponsesSocketEndpoint(services, config, responsesRoute) };
      if (this.#stopped) {
        endpoints.realtime.closeAll();
        endpoints.responses.closeAll();
      }
      return endpoints;
    });
  }

  /** Handles one `upgrade` request of the API listener. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const loaded = this.#endpoints.loaded();
    if (loaded !== null) {
      route(loaded, request, socket, head);
      return;
    }
    socket.on('error', () => undefined);
    this.#endpoints.get().then((endpoints) => route(endpoints, request, socket, head), (error: unknown) => {
      this.services.logger.error('websocket upgrade failed: its modules did not load', describeError(error));
      socket.destroy();
    });
  }

  /** No new session or connection is taken; each open one ends within `deadlineMs` (see the endpoints' own drain). */
  drain(deadlineMs: number): void {
    this.#stopped = true;
    const loaded = this.#endpoints.loaded();
    loaded?.realtime.drain(deadlineMs);
    loaded?.responses.drain(deadlineMs);
  }

  /** Ends every session and connection now (the instance stops). */
  closeAll(): void {
    this.#stopped = true;
    const loaded = this.#endpoints.loaded();
    loaded?.realtime.closeAll();
    loaded?.responses.closeAll();
  }
}

function route(endpoints: Endpoints, request: IncomingMessage, socket: Duplex, head: Buffer): void {
  if (endpoints.responses.serves(request.url ?? '/')) endpoints.responses.upgrade(request, socket, head);
  else endpoints.realtime.upgrade(request, socket, head);
}

/** GET /v1/realtime without a WebSocket upgrade: a realtime session is only a WebSocket. */
export function realtimeWithoutUpgrade(): Promise<void> {
  return Promise.reject(new GatewayError('bad_request', 'GET /v1/realtime is a WebSocket endpoint: connect with Upgrade: websocket (wss://<gateway>/v1/realtime?model=<model>).'));
}
