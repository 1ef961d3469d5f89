import { Pool, type Dispatcher } from 'undici';
import type { UpstreamRequest, UpstreamResponse, UpstreamTimeouts, UpstreamTransport } from './upstream-adapter.js';
import { UpstreamConnectionError, UpstreamExchange, type ResponseHead } from './upstream-exchange.js';

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
 * Upstream HTTP through one keep-alive undici Pool per origin: no new connection per request, and at most the
 * origin's connection limit open at once (further requests wait for a free connection). Limits come from the
 * channels (`setOriginLimits`); a pool whose limit changes is replaced, the old one finishing its requests.
 */
export class HttpTransport implements UpstreamTransport {
  readonly #defaultConnections: number;
  readonly #pools = new Map<string, { pool: Pool; connections: number }>();
  #limits: ReadonlyMap<string, number> = new Map();

  constructor(options: { connectionsPerOrigin?: number } = {}) {
    this.#defaultConnections = options.connectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN;
  }

  /** Connection limits by upstream origin (`https://host:port`); origins not listed get the default. */
  setOriginLimits(limits: ReadonlyMap<string, number>): void {
    this.#limits = limits;
    for (const [origin, entry] of this.#pools) {
      if (entry.connections === this.#connectionsOf(origin)) continue;
      this.#pools.delete(origin);
      entry.pool.close().catch(() => undefined);
    }
  }

  #connectionsOf(origin: string): number {
    return this.#limits.get(origin) ?? this.#defaultConnections;
  }

  #poolFor(origin: string): Pool {
    const existing = this.#pools.get(origin);
    if (existing !== undefined) return existing.pool;
    const connections = this.#connectionsOf(origin);
    const pool = new Pool(origin, {
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connections,
      pipelining: 1,
      connect: { timeout: 10_000 },
    });
    this.#pools.set(origin, { pool, connections });
    return pool;
  }

  async send(upstream: UpstreamRequest, options: { signal: AbortSignal; timeouts: UpstreamTimeouts }): Promise<UpstreamResponse> {
    if (options.signal.aborted) throw new UpstreamConnectionError('aborted');
    const exchange = new UpstreamExchange(options.signal, options.timeouts);
    let head: ResponseHead;
    try {
      const { origin, path } = targetOf(upstream.url);
      this.#poolFor(origin).dispatch({
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
      head = await exchange.head;
    } catch (error) {
      exchange.done();
      throw exchange.failure(error);
    }
    return {
      status: head.status,
      headers: head.headers,
      body: exchange.body(),
      discard: () => exchange.destroy(),
    };
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((entry) => entry.pool.close()));
  }
}
