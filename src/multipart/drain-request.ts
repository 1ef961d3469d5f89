import type { IncomingMessage } from 'node:http';

/**
 * After a refusal, how long the rest of an upload is read and dropped before the answer goes out: a connection
 * closed with unread bytes is reset, and a client still sending would see the reset instead of the answer.
 */
export const DRAIN_BEFORE_ANSWER_MS = 3000;

/**
 * The most of a refused request's body read and dropped before the answer: a larger body (declared or sent) is
 * not read on, and the answer closes the connection instead.
 */
export const DRAIN_BEFORE_ANSWER_BYTES = 32 * 1024 * 1024;

/**
 * Reads the body of a refused request and drops it (nothing is kept or written), for at most
 * DRAIN_BEFORE_ANSWER_MS and DRAIN_BEFORE_ANSWER_BYTES; a body declared larger than that is not read at all.
 * Returns whether it was read to its end; if not, the answer should close the connection.
 */
export function discardRequestBody(request: IncomingMessage): Promise<boolean> {
  if (request.complete) return Promise.resolve(true);
  if (request.destroyed || Number(request.headers['content-length']) > DRAIN_BEFORE_ANSWER_BYTES) return Promise.resolve(false);
  return new Promise((resolve) => {
    let read = 0;
    const done = (): void => {
      clearTimeout(timer);
      request.off('data', count);
      request.off('end', done);
      request.off('close', done);
      request.off('error', done);
      // Past the budget nothing more is read: the answer closes the connection.
      if (!request.complete) request.pause();
      resolve(request.complete);
    };
    const count = (chunk: Buffer): void => {
      read += chunk.length;
      if (read > DRAIN_BEFORE_ANSWER_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_BEFORE_ANSWER_MS);
    request.on('data', count);
    request.once('end', done);
    request.once('close', done);
    request.once('error', done);
    request.resume();
  });
}

/** How long a connection closed under a client still sending keeps reading and dropping after its answer is sent. */
export const LINGER_AFTER_CLOSE_MS = 2000;

/**
 * Makes the close that follows this request's answer a lingering one: the answer is sent and the writing side shut,
 * then whatever the client still sends is read and dropped until it stops (or LINGER_AFTER_CLOSE_MS passes) before
 * the socket is closed. Closing a socket with unread bytes makes the kernel send a reset, and a reset reaching the
 * client before it has read the answer destroys the answer.
 */
export function lingerAfterAnswer(request: IncomingMessage): void {
  const socket = request.socket;
  socket.destroySoon = (): void => {
    if (socket.writable) socket.end();
    // Once the client has stopped sending, the socket closes as soon as the answer is flushed.
    const closeWhenFlushed = (): void => {
      if (socket.writableFinished) socket.destroy();
      else socket.once('finish', () => socket.destroy());
    };
    const timer = setTimeout(() => socket.destroy(), LINGER_AFTER_CLOSE_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.once('end', closeWhenFlushed);
    request.on('data', dropChunk);
    request.once('end', closeWhenFlushed);
    request.resume();
  };
}

function dropChunk(): void {}
