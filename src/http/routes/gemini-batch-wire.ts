import { googleStatusFor } from '../../codecs/gemini/encode-error.js';
import type { Batch, BatchLineCounts, FinishedLine } from '../../domain/batches.js';

/** The `@type`s Google gives a batch's operation metadata and its output. */
const BATCH_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch';
const OUTPUT_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput';

/** google.rpc.Code numbers of the canonical status names (a `Status.code`). */
const RPC_CODES: Readonly<Record<string, number>> = {
  CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, ALREADY_EXISTS: 6, PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, ABORTED: 10, OUT_OF_RANGE: 11, UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14,
  DATA_LOSS: 15, UNAUTHENTICATED: 16,
};

const rfc3339 = (ms: number | null): string | undefined => (ms === null ? undefined : new Date(ms).toISOString());

/** A batch's resource name, as Google names batches. */
export const geminiBatchName = (id: string): string => `batches/${id}`;

export type GeminiBatchState = 'BATCH_STATE_PENDING' | 'BATCH_STATE_RUNNING' | 'BATCH_STATE_SUCCEEDED' | 'BATCH_STATE_FAILED' | 'BATCH_STATE_CANCELLED' | 'BATCH_STATE_EXPIRED';

/** The batch's `BatchState`: pending until a request has finished, running until its results are written. */
export function geminiBatchState(batch: Batch, counts: BatchLineCounts): GeminiBatchState {
  switch (batch.status) {
    case 'completed': return 'BATCH_STATE_SUCCEEDED';
    case 'failed': return 'BATCH_STATE_FAILED';
    case 'cancelled': return 'BATCH_STATE_CANCELLED';
    case 'expired': return 'BATCH_STATE_EXPIRED';
    default: return counts.done + counts.failed + counts.cancelled + counts.expired === 0 ? 'BATCH_STATE_PENDING' : 'BATCH_STATE_RUNNING';
  }
}

const ENDED_STATES: readonly GeminiBatchState[] = ['BATCH_STATE_SUCCEEDED', 'BATCH_STATE_FAILED', 'BATCH_STATE_CANCELLED', 'BATCH_STATE_EXPIRED'];

/** Placeholder for the inlined responses, streamed in its place a page at a time (see `geminiOperationParts`). */
export const RESPONSES_SLOT = '\u0000inlined-responses\u0000';

/**
 * A batch as Google's long-running `Operation`: `name`, `metadata` (the `GenerateContentBatch`: model, displayName,
 * times, `batchStats` with int64 counts as strings and zeros left out, `state`), `done` once ended. An ended batch
 * carries its output, one `InlinedResponse` a request in request order, in `metadata.output` and (succeeded) in
 * `response`; a cancelled or expired one carries the `error` Google's operations report instead of `response`.
 * With `withOutput`, the output array is `RESPONSES_SLOT`, for the caller to stream in.
 */
export function geminiOperation(batch: Batch, counts: BatchLineCounts, options: { withOutput: boolean }): Record<string, unknown> {
  const state = geminiBatchState(batch, counts);
  const done = ENDED_STATES.includes(state);
  const endTime = batch.completedAt ?? batch.cancelledAt ?? batch.expiredAt ?? batch.failedAt;
  const times = [batch.createdAt, batch.inProgressAt, batch.cancellingAt, batch.finalizingAt, endTime].filter((at): at is number => at !== null);
  const stats: Record<string, string> = { requestCount: String(batch.total) };
  const counted = { successfulRequestCount: counts.done, failedRequestCount: counts.failed + counts.cancelled + counts.expired, pendingRequestCount: counts.processing };
  for (const [name, value] of Object.entries(counted)) if (value > 0) stats[name] = String(value);
  // A batch read from an input file answers in a results file (`responsesFile`), written when it ended.
  const fromFile = batch.metadata?.inputFile !== undefined;
  const output = !done ? undefined
    : fromFile ? (batch.outputFileId === null ? undefined : { responsesFile: `files/${batch.outputFileId}` })
      : options.withOutput ? { inlinedResponses: { inlinedResponses: RESPONSES_SLOT } } : undefined;
  const metadata: Record<string, unknown> = {
    '@type': BATCH_TYPE,
    model: `models/${batch.metadata?.model ?? ''}`,
    ...(batch.metadata?.displayName === undefined ? {} : { displayName: batch.metadata.displayName }),
    ...(output === undefined ? {} : { output }),
    createTime: rfc3339(batch.createdAt),
    ...(endTime === null ? {} : { endTime: rfc3339(endTime) }),
    updateTime: rfc3339(Math.max(...times)),
    batchStats: stats,
    state,
    name: geminiBatchName(batch.id),
  };
  const operation: Record<string, unknown> = { name: geminiBatchName(batch.id), metadata };
  if (!done) return operation;
  operation.done = true;
  if (state === 'BATCH_STATE_CANCELLED') operation.error = { code: RPC_CODES.CANCELLED, message: 'The batch was cancelled.' };
  else if (state === 'BATCH_STATE_EXPIRED') operation.error = { code: RPC_CODES.DEADLINE_EXCEEDED, message: 'The batch expired before all of its requests were run.' };
  else if (output !== undefined) operation.response = { '@type': OUTPUT_TYPE, ...output };
  return operation;
}

/** The operation's JSON text around its output slots: the parts to write, the output streamed between each two. */
export function geminiOperationParts(operation: Record<string, unknown>): string[] {
  return JSON.stringify(operation).split(JSON.stringify(RESPONSES_SLOT));
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Why a request that never ran has no answer. */
const NOT_RUN = {
  cancelled: { code: RPC_CODES.CANCELLED, message: 'This request was not run: the batch was cancelled.' },
  expired: { code: RPC_CODES.DEADLINE_EXCEEDED, message: 'This request was not run before the batch expired.' },
} as const;

/**
 * A failed request's `google.rpc.Status`: the code of the status its answer named (Gemini's error body, or the
 * runner's own error), its message, and the gateway's error code as an `ErrorInfo` reason.
 */
function statusOf(line: FinishedLine): Record<string, unknown> {
  let parsed: unknown = null;
  try {
    parsed = line.result === null ? null : JSON.parse(line.result);
  } catch {
    parsed = null;
  }
  const inner = isObject(parsed) && isObject(parsed.error) ? parsed.error : {};
  const status = typeof inner.status === 'string' ? inner.status : googleStatusFor(line.statusCode ?? 500);
  const message = typeof inner.message === 'string' ? inner.message : 'The request failed.';
  const reason = typeof inner.code === 'string' ? inner.code : 'internal_error';
  return {
    code: RPC_CODES[status] ?? RPC_CODES.UNKNOWN,
    message,
    details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'unigate', metadata: { request_id: line.requestId ?? '' } }],
  };
}

/** One `InlinedResponse`: the request's `response` (its `GenerateContentResponse`) or `error`, with its `metadata`. */
export function geminiInlinedResponse(line: FinishedLine): Record<string, unknown> {
  const metadata = line.customId === '' ? {} : { metadata: JSON.parse(line.customId) as unknown };
  switch (line.state) {
    case 'done':
      return { ...metadata, response: JSON.parse(line.result ?? 'null') as unknown };
    case 'failed':
      return { ...metadata, error: statusOf(line) };
    case 'cancelled':
    case 'expired':
      return { ...metadata, error: NOT_RUN[line.state] };
  }
}

/** One line of a file batch's results file: `{"key", "response"}` or `{"key", "error"}` (a `google.rpc.Status`). */
export function geminiFileResultLine(line: FinishedLine): string {
  const { metadata: _metadata, ...result } = geminiInlinedResponse({ ...line, customId: '' });
  return `${JSON.stringify({ key: line.customId, ...result })}\n`;
}
