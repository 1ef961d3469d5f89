import { anthropicErrorBody } from '../../codecs/anthropic-messages/encode-error.js';
import { ENDED_BATCH_STATUSES, type Batch, type BatchLineCounts, type FinishedLine } from '../../domain/batches.js';

const rfc3339 = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Anthropic's `processing_status`: ended once the results are written, `canceling` while a cancel settles. */
export function processingStatus(batch: Batch): 'in_progress' | 'canceling' | 'ended' {
  if ((ENDED_BATCH_STATUSES as readonly string[]).includes(batch.status)) return 'ended';
  return batch.status === 'cancelling' ? 'canceling' : 'in_progress';
}

/** A batch as Anthropic's `MessageBatch` object; `resultsUrl` is where its results are read once it has ended. */
export function messageBatchObject(batch: Batch, counts: BatchLineCounts, resultsUrl: string): Record<string, unknown> {
  const status = processingStatus(batch);
  return {
    id: batch.id,
    type: 'message_batch',
    processing_status: status,
    request_counts: { processing: counts.processing, succeeded: counts.done, errored: counts.failed, canceled: counts.cancelled, expired: counts.expired },
    ended_at: rfc3339(batch.completedAt ?? batch.cancelledAt ?? batch.expiredAt ?? batch.failedAt),
    created_at: rfc3339(batch.createdAt),
    expires_at: rfc3339(batch.expiresAt),
    archived_at: null,
    cancel_initiated_at: rfc3339(batch.cancellingAt),
    results_url: status === 'ended' ? resultsUrl : null,
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A failed line's error as Anthropic's `ErrorResponse` (`{type:'error', error:{type, message}}`): the Messages route
 * answered in that shape already; an error the runner wrote itself (`{error:{message, type, code}}`) is mapped.
 */
function errorResponse(line: FinishedLine): Record<string, unknown> {
  let parsed: unknown = null;
  try {
    parsed = line.result === null ? null : JSON.parse(line.result);
  } catch {
    parsed = null;
  }
  if (isObject(parsed) && parsed.type === 'error' && isObject(parsed.error)) return { ...parsed, request_id: line.requestId };
  const inner = isObject(parsed) && isObject(parsed.error) ? parsed.error : {};
  const message = typeof inner.message === 'string' ? inner.message : 'The request failed.';
  const code = typeof inner.code === 'string' ? inner.code : 'internal_error';
  return { ...anthropicErrorBody(line.statusCode ?? 500, code, message), request_id: line.requestId };
}

/** One line of a Message Batch's results: `{custom_id, result: {type: succeeded|errored|canceled|expired, …}}`. */
export function messageBatchResultLine(line: FinishedLine): string {
  switch (line.state) {
    case 'done':
      return JSON.stringify({ custom_id: line.customId, result: { type: 'succeeded', message: JSON.parse(line.result ?? 'null') as unknown } });
    case 'failed':
      return JSON.stringify({ custom_id: line.customId, result: { type: 'errored', error: errorResponse(line) } });
    case 'cancelled':
      return JSON.stringify({ custom_id: line.customId, result: { type: 'canceled' } });
    case 'expired':
      return JSON.stringify({ custom_id: line.customId, result: { type: 'expired' } });
  }
}
