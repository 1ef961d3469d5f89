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
}

/** Where file bytes are kept: the database for small deployments, a bucket where one is configured. */
export interface FileContentStore {
  /** The name recorded with each file it keeps. */
  readonly name: string;
  put(fileId: string, content: Uint8Array): Promise<void>;
  /** Null when it keeps nothing under the id. */
  get(fileId: string): Promise<Buffer | null>;
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
