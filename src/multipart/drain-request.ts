import type { IncomingMessage } from 'node:http';

/**
 * After a refusal, how long the rest of an upload is read and dropped before the answer goes out: a connection
 * closed with unread bytes is reset, and a client still sending would see the reset instead of the answer.
 */
export const DRAIN_BEFORE_ANSWER_MS = 3000;

/** Resolves once the request body has been read to its end (or failed), or after `limitMs`. */
export function drained(request: IncomingMessage, limitMs: number): Promise<void> {
  if (request.complete || request.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      request.off('end', done);
      request.off('close', done);
      request.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, limitMs);
    request.once('end', done);
    request.once('close', done);
    request.once('error', done);
  });
}

/**
 * Reads the body of a refused request and drops it (nothing is kept or written), for at most DRAIN_BEFORE_ANSWER_MS.
 * Returns whether it was read to its end; if not, the answer should close the connection.
 */
export async function discardRequestBody(request: IncomingMessage): Promise<boolean> {
  request.resume();
  await drained(request, DRAIN_BEFORE_ANSWER_MS);
  return request.complete;
}
