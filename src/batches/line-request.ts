import { TAGS_HEADER } from '../customers/request-identity.js';
import type { ClientFamily } from '../codecs/client-family.js';
import type { Account, ApiKey } from '../domain/records.js';
import { inProcessRequest, runInProcess, type InProcessAnswer } from '../http/in-process-request.js';
import type { RouteHandler } from '../http/request-context.js';

/** What a line's request answered: its status, headers and body, as a caller over HTTP would have read them. */
export type LineAnswer = InProcessAnswer;

export interface LineCall {
  handler: RouteHandler;
  family: ClientFamily;
  path: string;
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
 * prices. A refusal or fault is answered as the route's family would answer it.
 */
export async function runLineRequest(call: LineCall): Promise<LineAnswer> {
  return runInProcess(call.handler, call.family, {
    // The usage row of the line carries the batch's id as its `batch` tag.
    request: inProcessRequest(call.path, Buffer.from(call.body), { [TAGS_HEADER]: `batch=${call.batchId}` }),
    requestId: call.requestId,
    method: 'POST',
    path: call.path,
    query: new URLSearchParams(),
    params: {},
    startedAt: performance.now(),
    clientIp: '127.0.0.1',
    family: call.family,
    batchLine: { batchId: call.batchId, key: call.key, account: call.account },
  });
}
