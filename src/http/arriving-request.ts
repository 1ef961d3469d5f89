import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientFamily } from '../codecs/client-family.js';
import { CallerGone } from '../relay/caller-signal.js';
import { newId } from '../shared/ids.js';
import type { RequestContext } from './request-context.js';

/**
 * The context of a request as it arrives (an HTTP request, or a WebSocket upgrade answered on its own response): a
 * new request id, also sent as `x-request-id`, the path and query read from its URL, and its caller-gone signal (the
 * listener frame aborts it; an upgrade's is never aborted: its session follows its own socket).
 */
export function arrivingContext(
  request: IncomingMessage,
  response: ServerResponse,
  clientIp: string,
  familyOfPath: (path: string) => ClientFamily,
  startedAt: number,
): RequestContext {
  const url = request.url ?? '/';
  const queryAt = url.indexOf('?');
  const path = queryAt < 0 ? url : url.slice(0, queryAt);
  const requestId = newId('req');
  response.setHeader('x-request-id', requestId);
  return {
    request,
    response,
    requestId,
    method: request.method ?? 'GET',
    path,
    query: new URLSearchParams(queryAt < 0 ? '' : url.slice(queryAt + 1)),
    params: {},
    startedAt,
    clientIp,
    family: familyOfPath(path),
    callerGone: new CallerGone(),
    observation: null,
  };
}
