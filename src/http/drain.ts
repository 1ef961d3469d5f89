import type { Server, ServerResponse } from 'node:http';
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

/**
 * While the instance drains for shutdown every answer closes its connection (`Connection: close`), so a load
 * balancer keeps no connection to it that the listener's close could cut under a request being sent.
 */
export function closingWhileDraining(listener: RequestListener, draining: () => boolean): RequestListener {
  return (request, response) => {
    if (draining()) response.setHeader('connection', 'close');
    listener(request, response);
  };
}

/**
 * Answers already under way when the drain begins. One whose headers are not out yet still gets `Connection: close`.
 * One whose headers are out cannot say it any more: when it ends, its connection stays open and a balancer may send
 * the next request on it at once, so cutting that connection soon after would fail the request (nginx does not
 * replay a POST it has sent). Such a connection is left alone until it has been idle for `quietMs`, longer than any
 * balancer's idle timeout by the deployment rule that DRAIN_SECONDS exceeds it: by then the balancer has closed it,
 * or sent a request on it that was answered with `Connection: close`.
 */
export class DrainQuiet {
  #lastIdleAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly quietMs: number) {}

  /** Called when the drain begins, with the answers in flight then. */
  follow(answers: Iterable<ServerResponse>): void {
    const markIdle = (): void => {
      this.#lastIdleAt = performance.now();
    };
    for (const response of answers) {
      if (!response.headersSent) response.setHeader('connection', 'close');
      else if (response.writableFinished) markIdle();
      else response.once('finish', markIdle);
    }
  }

  /** Milliseconds until every connection left idle by such an answer has been idle `quietMs`. */
  remainingMs(): number {
    return Math.max(0, this.#lastIdleAt + this.quietMs - performance.now());
  }
}

/**
 * Stops accepting (which closes the idle connections), lets in-flight requests finish and the connections `quiet`
 * follows settle (at most `graceMs` in all), then drops every remaining connection.
 */
export async function closeServer(server: Server, answers: ReadonlySet<ServerResponse>, graceMs: number, quiet: DrainQuiet): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const deadline = performance.now() + graceMs;
  while ((answers.size > 0 || quiet.remainingMs() > 0) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  server.closeAllConnections();
  await closed;
}
