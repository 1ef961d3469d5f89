import type { Database } from './database-schema.js';
import type { IntegerColumn, MoneyColumn, NullableIntegerColumn } from './schema-columns.js';

/** Tables of files and batches (migration 0037), in the conventions of database-schema.ts. */
export interface FilesTable {
  id: string;
  account_id: string;
  purpose: string;
  filename: string;
  bytes: IntegerColumn;
  store: string;
  created_at: IntegerColumn;
  expires_at: NullableIntegerColumn;
  /** Migration 0053. */
  mime_type: string | null;
}

/** A resumable upload not finished yet (migration 0053). */
export interface FileUploadsTable {
  id: string;
  account_id: string;
  display_name: string;
  mime_type: string;
  declared_bytes: IntegerColumn;
  received_bytes: IntegerColumn;
  created_at: IntegerColumn;
  expires_at: IntegerColumn;
}

export interface FileUploadChunksTable {
  upload_id: string;
  offset: IntegerColumn;
  content: Uint8Array;
}

export interface FileContentsTable {
  file_id: string;
  content: Uint8Array;
}

export interface BatchesTable {
  id: string;
  account_id: string;
  key_id: string;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: string;
  /** JSON object of strings, or NULL. */
  metadata: string | null;
  output_file_id: string | null;
  error_file_id: string | null;
  /** JSON array of validation errors, or NULL. */
  errors: string | null;
  output_expires_seconds: NullableIntegerColumn;
  total: IntegerColumn;
  completed: IntegerColumn;
  failed: IntegerColumn;
  cost_nano: MoneyColumn;
  input_tokens: IntegerColumn;
  cached_tokens: IntegerColumn;
  output_tokens: IntegerColumn;
  reasoning_tokens: IntegerColumn;
  created_at: IntegerColumn;
  expires_at: IntegerColumn;
  in_progress_at: NullableIntegerColumn;
  finalizing_at: NullableIntegerColumn;
  completed_at: NullableIntegerColumn;
  failed_at: NullableIntegerColumn;
  expired_at: NullableIntegerColumn;
  cancelling_at: NullableIntegerColumn;
  cancelled_at: NullableIntegerColumn;
  /** The instance writing the batch's result files, and until when that claim holds. */
  finalize_owner: string | null;
  finalize_until: NullableIntegerColumn;
}

export interface BatchLinesTable {
  batch_id: string;
  line: IntegerColumn;
  custom_id: string;
  body: string;
  state: string;
  lease_owner: string | null;
  lease_until: NullableIntegerColumn;
  attempts: IntegerColumn;
  status_code: NullableIntegerColumn;
  request_id: string | null;
  /** The answer's body (done) or the error object (failed), as JSON text. */
  result: string | null;
  cost_nano: MoneyColumn;
  /** When the line's outcome was recorded (epoch ms); null until then. */
  finished_at: NullableIntegerColumn;
  /** 1 when the line is in the part of its batch a provider's batch API runs (migration 0054), else 0. */
  via_provider: IntegerColumn;
}

export type BatchTables = {
  files: FilesTable;
  file_contents: FileContentsTable;
  file_uploads: FileUploadsTable;
  file_upload_chunks: FileUploadChunksTable;
  batches: BatchesTable;
  batch_lines: BatchLinesTable;
};

export type BatchDatabase = Database & BatchTables;

/** A batch a provider's own batch API runs (migration 0045). */
export interface ProviderBatchesTable {
  batch_id: string;
  channel_id: string;
  provider: string;
  state: string;
  upstream_file_id: string | null;
  upstream_batch_id: string | null;
  upstream_status: string | null;
  cancel_sent: IntegerColumn;
  next_at: IntegerColumn;
  lease_owner: string | null;
  lease_until: NullableIntegerColumn;
  error: string | null;
  submit_started_at: NullableIntegerColumn;
}

export type ProviderBatchTables = BatchTables & { provider_batches: ProviderBatchesTable };
