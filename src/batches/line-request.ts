import { TAGS_HEADER } from '../customers/request-identity.js';
import type { ClientFamily } from '../codecs/client-family.js';
import { GEMINI_BATCH_ENDPOINT, type BatchEndpoint } from '../domain/batches.js';
import type { Account, ApiKey } from '../domain/records.js';
import { runInProcess, type InProcessAnswer } from '../http/in-process-request.js';
import type { RouteHandler } from '../http/request-context.js';

/** What a line's request answered: its status, headers and body, as a caller over HTTP would have read them. */
export type LineAnswer = InProcessAnswer;

export interface LineCall {
  handler: RouteHandler;
  family: ClientFamily;
  path: string;
  /** The path's parameters (a Gemini action's `model`); none when absent. */
  params?: Record<string, string>;
  batchId: string;
  /** The line's request id: its usage row's, the same however often the line is taken up. */
  requestId: string;
  key: ApiKey;
  account: Account;
  body: string;
}

/**
 * Runs one line through the API's own route, in process: the same operation, admission, relay and one settlement
 * as a request over HTTP, with the batch's key and account as the caller (checked by the runner) and the batch's
 * prices. The usage row of the line carries the batch's id as its `batch` tag.
 */
export function runLineRequest(call: LineCall): Promise<LineAnswer> {
  return runInProcess({
    handler: call.handler,
    family: call.family,
    path: call.path,
    ...(call.params === undefined ? {} : { params: call.params }),
    requestId: call.requestId,
    caller: { key: call.key, account: call.account, batchId: call.batchId },
    body: call.body,
    headers: { [TAGS_HEADER]: `batch=${call.batchId}` },
  });
}

/** Where a queued line is sent: the path and its parameters, and the body the route reads. */
export interface LineTarget {
  path: string;
  params: Record<string, string>;
  body: string;
}

/**
 * The request a queued line makes. Most endpoints take the line's body as it is, on the endpoint's path. A Gemini
 * line's body carries its `model` (queued so, to be checked and priced like any line's); the route takes the model
 * from its path, so it moves there: `/v1beta/models/{model}:generateContent` with the rest of the body.
 */
export function lineTarget(endpoint: BatchEndpoint, body: string): LineTarget {
  if (endpoint !== GEMINI_BATCH_ENDPOINT) return { path: endpoint, params: {}, body };
  const { model, ...request } = JSON.parse(body) as Record<string, unknown>;
  const name = typeof model === 'string' ? model : '';
  return { path: endpoint.replace('{model}', encodeURIComponent(name)), params: { model: name }, body: JSON.stringify(request) };
}
