import type { Dispatcher } from 'undici';
import { Agent, Pool } from './undici-dispatch.js';
import type { UpstreamRequest, UpstreamResponse, UpstreamTimeouts, UpstreamTransport } from './upstream-adapter.js';
import { UpstreamConnectionError, UpstreamExchange } from './upstream-exchange.js';
import type { CallerSignal } from '../relay/caller-signal.js';

/** Origin and path of each upstream URL, parsed once (a channel has a handful). */
const targets = new Map<string, { origin: string; path: string }>();
const MAX_TARGETS = 1024;

function targetOf(url: string): { origin: string; path: string } {
  let target = targets.get(url);
  if (target === undefined) {
    const parsed = new URL(url);
    target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    if (targets.size >= MAX_TARGETS) targets.clear();
    targets.set(url, target);
  }
  return target;
}

/**
 * Connections to one upstream origin when no channel sets `settings.max_connections`: far above what one process
 * admits at once (ADMISSION_MAX_IN_FLIGHT), so long streams never wait behind each other for a connection.
 */
export const DEFAULT_CONNECTIONS_PER_ORIGIN = 10_000;

/**
 * Upstream HTTP through one undici Agent with a keep-alive Pool per origin: no new connection per request, and at
 * most the origin's connection limit open at once (further requests wait for a free connection). Limits come from
 * the channels (`setOriginLimits`).
 */
export class HttpTransport implements UpstreamTransport {
  readonly #defaultConnections: number;
  #limits: ReadonlyMap<string, number> = new Map();
  #agent: Agent;

  constructor(options: { connectionsPerOrigin?: number } = {}) {
    this.#defaultConnections = options.connectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN;
    this.#agent = this.#newAgent();
  }

  /**
   * Connection limits by upstream origin (`https://host:port`); origins not listed get the default. A change takes
   * a fresh agent; the old one finishes its requests, then closes.
   */
  setOriginLimits(limits: ReadonlyMap<string, number>): void {
    if (sameLimits(limits, this.#limits)) return;
    this.#limits = limits;
    const old = this.#agent;
    this.#agent = this.#newAgent();
    old.close().catch(() => undefined);
  }

  #connectionsOf(origin: string): number {
    return this.#limits.get(origin) ?? this.#defaultConnections;
  }

  /** One undici Agent: a keep-alive Pool per origin, each sized by its origin's limit. */
  #newAgent(): Agent {
    return new Agent({
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      pipelining: 1,
      connect: { timeout: 10_000 },
      factory: (origin, options) => new Pool(origin, { ...options, connections: this.#connectionsOf(new URL(String(origin)).origin) }),
    });
  }

  /**
   * Dispatches the request; the promise is the exchange's own (see `UpstreamExchange.response`), so the relay waits
   * for the head in its own frame, with no async level of the transport's in between.
   */
  send(upstream: UpstreamRequest, options: { signal: CallerSignal; timeouts: UpstreamTimeouts }): Promise<UpstreamResponse> {
    if (options.signal.aborted) return Promise.reject(new UpstreamConnectionError('aborted'));
    const exchange = new UpstreamExchange(options.signal, options.timeouts);
    try {
      const { origin, path } = targetOf(upstream.url);
      this.#agent.dispatch({
        origin,
        path,
        method: upstream.method,
        headers: upstream.headers,
        // A streamed body (an upload spooled to disk) is opened afresh for every attempt; undici writes an async
        // iterable chunk by chunk, waiting for the socket to drain (no Readable in between, nothing buffered). undici
        // accepts async iterables at run time ("a Readable stream, an iterable, or an async iterable"); its
        // typings leave them out, hence the cast.
        body: upstream.streamedBody === undefined ? upstream.body : (upstream.streamedBody.open() as unknown as Dispatcher.DispatchOptions['body']),
        // Ours (UpstreamExchange) are exact; undici's are off.
        headersTimeout: 0,
        bodyTimeout: 0,
      }, exchange);
    } catch (error) {
      exchange.done();
      return Promise.reject(exchange.failure(error));
    }
    return exchange.response;
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

function sameLimits(left: ReadonlyMap<string, number>, right: ReadonlyMap<string, number>): boolean {
  if (left.size !== right.size) return false;
  for (const [origin, limit] of left) if (right.get(origin) !== limit) return false;
  return true;
}
