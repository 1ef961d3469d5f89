/** The purposes a file may be uploaded for (OpenAI's list); `batch_output` files are written by the gateway. */
export const UPLOAD_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;
export const FILE_PURPOSES = [...UPLOAD_PURPOSES, 'batch_output'] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

/** A file an account owns: its bytes are kept by a `FileContentStore` under the file's id. */
export interface StoredFile {
  id: string;
  accountId: string;
  purpose: FilePurpose;
  filename: string;
  bytes: number;
  /** Which store keeps its bytes (`database`). */
  store: string;
  createdAt: number;
  /** Epoch ms after which it is gone; null: kept until deleted. */
  expiresAt: number | null;
  /** The content type it was uploaded with (Gemini's Files API); absent when none was given. */
  mimeType?: string;
}

/** A resumable upload started and not finished: its chunks are kept until it is. */
export interface FileUpload {
  id: string;
  accountId: string;
  displayName: string;
  mimeType: string;
  declaredBytes: number;
  receivedBytes: number;
  createdAt: number;
  expiresAt: number;
}

/** Resumable uploads; every call names the owning account. */
export interface FileUploadRepository {
  create(upload: FileUpload): Promise<void>;
  /** The account's upload, unless abandoned (past its expiry). */
  get(accountId: string, uploadId: string, now: number): Promise<FileUpload | null>;
  /** Keeps a chunk received at `offset` when the upload has exactly that many bytes so far; false otherwise. */
  append(accountId: string, uploadId: string, offset: number, content: Uint8Array): Promise<boolean>;
  /**
   * Takes a complete upload to finish it: true for one caller only (a repeated or racing finalize gets false); the
   * upload then takes no more chunks and reads as absent, while its chunks stay readable until it is deleted.
   */
  claim(accountId: string, uploadId: string, now: number): Promise<boolean>;
  /** The chunks in order, one at a time. */
  chunks(uploadId: string): AsyncIterable<Uint8Array>;
  /** Removes the upload and its chunks. */
  delete(uploadId: string): Promise<void>;
  /** Removes uploads abandoned before `now` (up to `limit`); how many went. */
  sweep(now: number, limit: number): Promise<number>;
}

/** A file's bytes to keep: in memory, or spooled to a local file of `bytes` bytes (read from disk as it is sent). */
export type FileBody = Uint8Array | { path: string; bytes: number };

/** Where file bytes are kept: the database for small deployments, a bucket where one is configured. */
export interface FileContentStore {
  /** The name recorded with each file it keeps. */
  readonly name: string;
  put(fileId: string, content: FileBody): Promise<void>;
  /** The whole content; null when it keeps nothing under the id. */
  get(fileId: string): Promise<Buffer | null>;
  /** The content as a stream of chunks (a bucket's bytes pass through without being held whole); null when absent. */
  open(fileId: string): Promise<AsyncIterable<Uint8Array> | null>;
  /** Removes the ids' content; ids it keeps nothing under are passed over. */
  delete(fileIds: readonly string[]): Promise<void>;
}

export interface FileListQuery {
  accountId: string;
  purpose?: FilePurpose;
  order: 'asc' | 'desc';
  limit: number;
  /** The id of the last file of the previous page. */
  after?: string;
  now: number;
}

/** File records; every read names the owning account, so no account reaches another's files. */
export interface FileRepository {
  /** Inserts the record when the account's live files plus this one stay within `quotaBytes`; false otherwise. */
  insertWithinQuota(file: StoredFile, quotaBytes: number, now: number): Promise<boolean>;
  /** The account's file, unless it has expired. */
  get(accountId: string, fileId: string, now: number): Promise<StoredFile | null>;
  /** One more than `limit` when more follow (the caller reports `has_more`). */
  list(query: FileListQuery): Promise<StoredFile[]>;
  delete(accountId: string, fileId: string): Promise<boolean>;
  /** Removes up to `limit` expired records and returns them (their bytes are then deleted from their store). */
  takeExpired(now: number, limit: number): Promise<StoredFile[]>;
}
