import type { Server, ServerResponse } from 'node:http';
import type { RequestListener } from '../app.js';

/** A listener with the answers it has begun and not yet closed, so shutdown can wait for exactly those. */
export interface InFlightListener {
  listener: RequestListener;
  answers: ReadonlySet<ServerResponse>;
}

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
 * When the drain begins, the answers already under way close their connections too: one not begun yet carries
 * `Connection: close`, and one already streaming ends its connection as soon as its last byte is written, instead of
 * leaving it open for a balancer to reuse just as the listener closes.
 */
export function closeConnectionsAfter(answers: Iterable<ServerResponse>): void {
  for (const response of answers) {
    if (!response.headersSent) {
      response.setHeader('connection', 'close');
      continue;
    }
    const socket = response.socket;
    if (socket !== null && !response.writableFinished) response.once('finish', () => socket.end());
  }
}

/** Stops accepting, lets in-flight requests finish (at most `graceMs`), then drops every remaining connection. */
export async function closeServer(server: Server, answers: ReadonlySet<ServerResponse>, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const deadline = performance.now() + graceMs;
  while (answers.size > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  server.closeAllConnections();
  await closed;
}
