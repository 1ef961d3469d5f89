import { TAGS_HEADER } from '../customers/request-identity.js';
import type { ClientFamily } from '../codecs/client-family.js';
import type { Account, ApiKey } from '../domain/records.js';
import { runInProcess, type InProcessAnswer } from '../http/in-process-request.js';
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
 * prices. The usage row of the line carries the batch's id as its `batch` tag.
 */
export function runLineRequest(call: LineCall): Promise<LineAnswer> {
  return runInProcess({
    handler: call.handler,
    family: call.family,
    path: call.path,
    requestId: call.requestId,
    caller: { key: call.key, account: call.account, batchId: call.batchId },
    body: call.body,
    headers: { [TAGS_HEADER]: `batch=${call.batchId}` },
  });
}
