import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { RequestListener } from '../app.js';

/**
 * A connection that has sent no request yet gets at least this long after the listener closes to send one (a client
 * writes its request as soon as it has connected), however short DRAIN_SECONDS is.
 */
const FIRST_REQUEST_GRACE_MS = 1000;

/**
 * How a listener stops without cutting a request a client or balancer is sending it.
 *
 * Until the listener closes, connections live as usual: a balancer keeps reusing those it holds and opens few new
 * ones. That matters at the instant the listener closes, when the kernel resets every connection still waiting to
 * be accepted, request and all (nginx cannot replay a POST it has sent): the fewer new connections arrive, the
 * rarer that is. During the drain, answers say a connection is kept idle only DRAIN_SECONDS (`Keep-Alive:
 * timeout`), so a client that honours it lets it go before the instance closes it. After the close, a new
 * connection is refused (a balancer sends that request elsewhere), every answer closes its connection, and a
 * connection left idle is closed only once it has been idle DRAIN_SECONDS (counted from the drain's start at the
 * earliest): longer than any balancer keeps one idle, by the deployment rule, so the balancer has closed it first
 * and no request is on its way over it.
 */
export class ListenerStop {
  readonly #connections = new Set<Socket>();
  /** Connections that have not sent a request yet. */
  readonly #fresh = new WeakSet<Socket>();
  /** From the drain's start: since when each connection has been idle (absent while it carries an answer). */
  readonly #idleSince = new Map<Socket, number>();
  /** From the drain's start: the answers each connection carries (more than one when requests are pipelined). */
  readonly #answering = new Map<Socket, number>();
  #phase: 'serving' | 'draining' | 'stopped' = 'serving';

  constructor(
    private readonly answers: ReadonlySet<ServerResponse>,
    private readonly drainSeconds: number,
  ) {}

  /**
   * The request listener, with the connection headers of the phase (as usual, then the drain's, then closing), and
   * noting that the connection has sent a request.
   */
  withConnectionHeaders(listener: RequestListener): RequestListener {
    return (request, response) => {
      this.#fresh.delete(request.socket);
      if (this.#phase !== 'serving') {
        if (this.#phase === 'draining') response.setHeader('keep-alive', `timeout=${this.drainSeconds}`);
        else response.setHeader('connection', 'close');
        this.#followAnswer(request.socket, response);
      }
      listener(request, response);
    };
  }

  /** Follows the connections the server accepts. */
  follow(server: Server): void {
    server.on('connection', (socket: Socket) => {
      this.#connections.add(socket);
      this.#fresh.add(socket);
      if (this.#phase !== 'serving') this.#idleSince.set(socket, performance.now());
      socket.once('close', () => {
        this.#connections.delete(socket);
        this.#idleSince.delete(socket);
        this.#answering.delete(socket);
      });
    });
  }

  /**
   * From now on answers say a connection is kept idle at most DRAIN_SECONDS, and how long each connection has been
   * idle is followed (one idle now counts from now).
   */
  startDraining(): void {
    if (this.#phase !== 'serving') return;
    this.#phase = 'draining';
    const now = performance.now();
    for (const socket of this.#connections) this.#idleSince.set(socket, now);
    for (const response of this.answers) if (response.socket !== null) this.#followAnswer(response.socket, response);
  }

  /**
   * Stops accepting, then closes each connection once its answers are done and it has been idle DRAIN_SECONDS (one
   * that has sent nothing yet, at least FIRST_REQUEST_GRACE_MS); an answer still running after `graceMs` is cut.
   */
  async stop(server: Server, graceMs: number): Promise<void> {
    this.startDraining();
    this.#phase = 'stopped';
    // net's close stops accepting and leaves open connections alone; http's would also cut the idle ones at once,
    // while a balancer may be sending a request on one of them.
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    for (const response of this.answers) if (!response.headersSent) response.setHeader('connection', 'close');
    const quietMs = this.drainSeconds * 1000;
    const firstRequestMs = Math.max(quietMs, FIRST_REQUEST_GRACE_MS);
    const startedAt = performance.now();
    while (this.#connections.size > 0 && performance.now() - startedAt < graceMs + firstRequestMs) {
      const now = performance.now();
      for (const socket of this.#connections) {
        const since = this.#idleSince.get(socket);
        if (since === undefined ? now - startedAt >= graceMs : now - since >= (this.#fresh.has(socket) ? firstRequestMs : quietMs)) socket.destroy();
      }
      if (this.#connections.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    server.closeAllConnections();
    await closed;
    // http's own close also stops its timer that checks connection deadlines; the listener is closed already.
    server.close();
  }

  #followAnswer(socket: Socket, response: ServerResponse): void {
    this.#answering.set(socket, (this.#answering.get(socket) ?? 0) + 1);
    this.#idleSince.delete(socket);
    response.once('close', () => {
      const left = (this.#answering.get(socket) ?? 1) - 1;
      if (left > 0) {
        this.#answering.set(socket, left);
        return;
      }
      this.#answering.delete(socket);
      if (this.#connections.has(socket)) this.#idleSince.set(socket, performance.now());
    });
  }
}
