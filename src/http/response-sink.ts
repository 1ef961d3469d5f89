import type { ResponseSink } from '../relay/response-sink.js';
import { ClientStream, sendJsonBody } from './client-stream.js';
import type { RequestContext } from './request-context.js';

/** The relay's view of the caller, over the request's `ServerResponse`. */
export function responseSink(context: RequestContext): ResponseSink {
  const out = context.response;
  const callerGone = context.callerGone;
  return {
    requestId: context.requestId,
    startedAt: context.startedAt,
    callerGone,
    // On the request's own signal, which whoever serves the request aborts when the response closes unfinished.
    onCallerGone(listener) {
      callerGone.addEventListener('abort', listener);
      return () => callerGone.removeEventListener('abort', listener);
    },
    send: (answer) => sendJsonBody(out, answer.status, answer.body, answer.contentType, answer.headers),
    openStream: (headers, signal, onFirstByte) => new ClientStream(out, headers, signal, onFirstByte),
    cut: (error) => out.destroy(error),
  };
}
