import type { Batch } from '../../domain/batches.js';

const seconds = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

/** A batch as OpenAI's `Batch` object. */
export function batchObject(batch: Batch): Record<string, unknown> {
  return {
    id: batch.id,
    object: 'batch',
    endpoint: batch.endpoint,
    errors: batch.errors === null ? null : { object: 'list', data: batch.errors },
    input_file_id: batch.inputFileId,
    completion_window: batch.completionWindow,
    status: batch.status,
    output_file_id: batch.outputFileId,
    error_file_id: batch.errorFileId,
    created_at: seconds(batch.createdAt),
    in_progress_at: seconds(batch.inProgressAt),
    expires_at: seconds(batch.expiresAt),
    finalizing_at: seconds(batch.finalizingAt),
    completed_at: seconds(batch.completedAt),
    failed_at: seconds(batch.failedAt),
    expired_at: seconds(batch.expiredAt),
    cancelling_at: seconds(batch.cancellingAt),
    cancelled_at: seconds(batch.cancelledAt),
    request_counts: { total: batch.total, completed: batch.completed, failed: batch.failed },
    metadata: batch.metadata,
    usage: {
      input_tokens: batch.tokens.input,
      input_tokens_details: { cached_tokens: batch.tokens.cached },
      output_tokens: batch.tokens.output,
      output_tokens_details: { reasoning_tokens: batch.tokens.reasoning },
      total_tokens: batch.tokens.input + batch.tokens.output,
    },
  };
}
