import type { ServerResponse } from 'node:http';
import type { RequestContext } from './request-context.js';

/** Waits until the response takes more or is gone, leaving no listener behind. */
function drainedOrClosed(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/**
 * Sends a body as it arrives, chunk by chunk, waiting while the client reads slower than the source produces. A source
 * failing once the head is sent cuts the connection (the client sees a short body, never a wrong one).
 */
export async function sendStream(context: RequestContext, status: number, body: AsyncIterable<Uint8Array>, headers: Record<string, string>): Promise<void> {
  const response = context.response;
  response.statusCode = status;
  for (const name in headers) response.setHeader(name, headers[name] as string);
  try {
    for await (const chunk of body) {
      if (response.destroyed) break;
      if (!response.write(chunk)) await drainedOrClosed(response);
    }
  } catch (error) {
    if (!response.headersSent) throw error;
    response.destroy(error instanceof Error ? error : new Error(String(error)));
    return;
  }
  response.end();
}
