import type { ResponseSink } from '../relay/response-sink.js';
import { ClientStream, sendJsonBody } from './client-stream.js';
import type { RequestContext } from './request-context.js';

/** The relay's view of the caller, over the request's `ServerResponse`. */
export function responseSink(context: RequestContext): ResponseSink {
  const out = context.response;
  return {
    requestId: context.requestId,
    startedAt: context.startedAt,
    onCallerGone(listener) {
      const onClose = (): void => {
        if (!out.writableFinished) listener();
      };
      out.once('close', onClose);
      return () => out.off('close', onClose);
    },
    send: (answer) => sendJsonBody(out, answer.status, answer.body, answer.contentType, answer.headers),
    openStream: (headers, signal, onFirstByte) => new ClientStream(out, headers, signal, onFirstByte),
    cut: (error) => out.destroy(error),
  };
}
