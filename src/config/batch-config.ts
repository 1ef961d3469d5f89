import { integerSetting, SettingError } from './settings.js';
import { readFileStoreConfig, type FileStoreConfig } from './file-store-config.js';

/** Files and batches (docs/operators.md, "Files and batches"). */
export interface BatchConfig {
  /** Largest file an upload may be (FILE_MAX_BYTES). */
  maxFileBytes: number;
  /** Bytes of live files one account may keep (FILE_ACCOUNT_QUOTA_BYTES). */
  accountQuotaBytes: number;
  /** Most lines in one batch's input file (BATCH_MAX_LINES). */
  maxLines: number;
  /** Lines this instance runs at once (BATCH_CONCURRENCY; 0: this instance runs no batch lines). */
  concurrency: number;
  /**
   * How long a line's lease holds without renewal (BATCH_LINE_LEASE_SECONDS): the instance running it renews it on
   * every poll, so only a stopped instance's lines are taken over, this long after it stopped.
   */
  leaseMs: number;
  /** How often an idle instance looks for lines and batches to finish (BATCH_POLL_MS). */
  pollMs: number;
  /**
   * Whether a batch whose lines a channel with its own batch API can run is sent there (BATCH_PROVIDER_PASS_THROUGH,
   * on by default; a channel's `provider_batches: false` setting turns it off for that channel).
   */
  providerPassThrough: boolean;
  /** How often a batch sent to a provider is polled (BATCH_PROVIDER_POLL_SECONDS). */
  providerPollMs: number;
  /** Where file bytes are kept (FILE_STORE and the S3_* settings). */
  fileStore: FileStoreConfig;
}

export class BatchConfigError extends SettingError {
  override name = 'BatchConfigError';
}

function readSwitch(read: (name: string) => string | undefined, name: string, fallback: boolean): boolean {
  const raw = read(name);
  if (raw === undefined) return fallback;
  if (raw === 'on' || raw === 'true' || raw === '1') return true;
  if (raw === 'off' || raw === 'false' || raw === '0') return false;
  throw new BatchConfigError(`${name} must be on or off, got "${raw}"`);
}

const MIB = 1024 * 1024;

export function readBatchConfig(read: (name: string) => string | undefined): BatchConfig {
  return {
    maxFileBytes: integerSetting(read, 'FILE_MAX_BYTES', 100 * MIB, 1024, 512 * MIB),
    accountQuotaBytes: integerSetting(read, 'FILE_ACCOUNT_QUOTA_BYTES', 1024 * MIB, 1024, Number.MAX_SAFE_INTEGER),
    maxLines: integerSetting(read, 'BATCH_MAX_LINES', 50_000, 1, 1_000_000),
    concurrency: integerSetting(read, 'BATCH_CONCURRENCY', 4, 0, 256),
    leaseMs: integerSetting(read, 'BATCH_LINE_LEASE_SECONDS', 120, 1, 86_400) * 1000,
    pollMs: integerSetting(read, 'BATCH_POLL_MS', 1000, 10, 60_000),
    providerPassThrough: readSwitch(read, 'BATCH_PROVIDER_PASS_THROUGH', true),
    providerPollMs: integerSetting(read, 'BATCH_PROVIDER_POLL_SECONDS', 60, 1, 3600) * 1000,
    fileStore: readFileStoreConfig(read),
  };
}
