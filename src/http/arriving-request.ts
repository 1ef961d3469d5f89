import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { ClientFamily } from '../codecs/client-family.js';
import { CallerGone } from '../relay/caller-signal.js';
import { newId } from '../shared/ids.js';
import { ServerResponse as NodeServerResponse } from '../shared/node-http.js';
import type { RequestContext } from './request-context.js';

const REQUEST_ID = Symbol('requestId');

interface IdentifiedResponse extends ServerResponse {
  [REQUEST_ID]: string;
}

type HeadList = OutgoingHttpHeaders | OutgoingHttpHeader[];

/** node:http's own writeHead, which every head goes through (a write or an end without one calls it too). */
const nodeWriteHead = NodeServerResponse.prototype.writeHead as (this: ServerResponse, statusCode: number, reason?: string | HeadList, headers?: HeadList) => ServerResponse;

/**
 * A response's head with its request id (`x-request-id`), added as the head is written rather than set when the
 * request arrives: a head written at once as a flat `[name, value, …]` list (the answers of the API) then stays one
 * list node:http takes as it is, where one header set before it would make node:http merge the list into its header
 * table, removing and appending name by name. A list that names the id itself, or a head with headers set before it
 * (CORS, connection), has its headers set one by one after the id, so whatever the head names wins, as when the id
 * was set on arrival.
 */
function writeHeadWithRequestId(this: ServerResponse, statusCode: number, reason?: string | HeadList, headers?: HeadList): ServerResponse {
  const requestId = (this as IdentifiedResponse)[REQUEST_ID];
  const list = typeof reason === 'string' ? headers : reason;
  if (!Array.isArray(list)) {
    this.setHeader('x-request-id', requestId);
    return nodeWriteHead.call(this, statusCode, reason, headers);
  }
  let named = false;
  for (let at = 0; at < list.length && !named; at += 2) named = list[at] === 'x-request-id';
  if (!named && this.getHeaderNames().length === 0) {
    list.push('x-request-id', requestId);
    return nodeWriteHead.call(this, statusCode, reason, headers);
  }
  this.setHeader('x-request-id', requestId);
  for (let at = 0; at + 1 < list.length; at += 2) this.setHeader(String(list[at]), list[at + 1] as OutgoingHttpHeader);
  return nodeWriteHead.call(this, statusCode, typeof reason === 'string' ? reason : undefined);
}

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
  (response as IdentifiedResponse)[REQUEST_ID] = requestId;
  response.writeHead = writeHeadWithRequestId;
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
