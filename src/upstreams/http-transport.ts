import { Agent, type Dispatcher } from 'undici';
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

/** Upstream HTTP through one undici Agent: keep-alive pools per origin, no new connection per request. */
export class HttpTransport implements UpstreamTransport {
  readonly #agent: Agent;

  constructor(options: { connectionsPerOrigin?: number } = {}) {
    this.#agent = new Agent({
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connections: options.connectionsPerOrigin ?? 256,
      pipelining: 1,
      connect: { timeout: 10_000 },
    });
  }

  async send(upstream: UpstreamRequest, options: { signal: AbortSignal; timeouts: UpstreamTimeouts }): Promise<UpstreamResponse> {
    if (options.signal.aborted) throw new UpstreamConnectionError('aborted');
    const exchange = new UpstreamExchange(options.signal, options.timeouts);
    let head: ResponseHead;
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

  close(): Promise<void> {
    return this.#agent.close();
  }
}
