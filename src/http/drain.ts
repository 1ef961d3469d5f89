import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { RequestListener } from '../app.js';

/** A listener with the answers it has begun and not yet closed, so shutdown can wait for exactly those. */
export interface InFlightListener {
  listener: RequestListener;
  answers: ReadonlySet<ServerResponse>;
}

/** The console listener's tracking (the API listener's is part of its metrics, in `instrumentListener`). */
export function trackInFlight(listener: RequestListener): InFlightListener {
  const answers = new Set<ServerResponse>();
  return {
    listener: (request, response) => {
      answers.add(response);
      response.once('close', () => {
        answers.delete(response);
      });
      listener(request, response);
    },
    answers,
  };
}

export interface StopTimes {
  /** How long answers in flight when the listener closes may take before their connections are cut. */
  graceMs: number;
  /**
   * How long a connection must have been idle before it is closed: longer than any balancer keeps a connection
   * idle (the deployment rule for DRAIN_SECONDS), so the balancer has closed it first and no request is on its way.
   */
  quietMs: number;
}

/**
 * How a listener stops without cutting a request a balancer is sending it.
 *
 * Until the listener closes, connections live as usual: a balancer keeps reusing those it holds and opens few new
 * ones. That matters at the instant the listener closes, when the kernel resets every connection still waiting to
 * be accepted, request and all (nginx cannot replay a POST it has sent): the fewer new connections arrive, the
 * rarer that is. After the close, a new connection is refused (a balancer sends that request elsewhere), every
 * answer closes its connection, and a connection left idle is closed only once it has been idle `quietMs`.
 */
export class ListenerStop {
  readonly #connections = new Set<Socket>();
  #stopped = false;

  constructor(private readonly answers: ReadonlySet<ServerResponse>) {}

  /** The request listener: once the listener has stopped accepting, every answer closes its connection. */
  closingOnceStopped(listener: RequestListener): RequestListener {
    return (request, response) => {
      if (this.#stopped) response.setHeader('connection', 'close');
      listener(request, response);
    };
  }

  /** Follows the connections the server accepts. */
  follow(server: Server): void {
    server.on('connection', (socket: Socket) => {
      this.#connections.add(socket);
      socket.once('close', () => this.#connections.delete(socket));
    });
  }

  /**
   * Stops accepting, then closes each connection once its answer is done and it has been idle `quietMs`; an
   * answer still running after `graceMs` is cut.
   */
  async stop(server: Server, times: StopTimes): Promise<void> {
    this.#stopped = true;
    // net's close stops accepting and leaves open connections alone; http's would also cut the idle ones at once,
    // while a balancer may be sending a request on one of them.
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    for (const response of this.answers) if (!response.headersSent) response.setHeader('connection', 'close');
    const startedAt = performance.now();
    const idleSince = new Map<Socket, number>();
    while (this.#connections.size > 0 && performance.now() - startedAt < times.graceMs + times.quietMs) {
      const now = performance.now();
      const busy = new Set<Socket | null>();
      for (const response of this.answers) busy.add(response.socket);
      for (const socket of this.#connections) {
        if (busy.has(socket)) {
          idleSince.delete(socket);
          if (now - startedAt >= times.graceMs) socket.destroy();
          continue;
        }
        const since = idleSince.get(socket) ?? now;
        idleSince.set(socket, since);
        if (now - since >= times.quietMs) socket.destroy();
      }
      if (this.#connections.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    server.closeAllConnections();
    await closed;
    // http's own close also stops its timer that checks connection deadlines; the listener is closed already.
    server.close();
  }
}
