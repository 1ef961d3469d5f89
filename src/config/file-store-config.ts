import { SettingError } from './settings.js';
/** Where file bytes are kept (docs/operators.md, "Files and batches"): the database, or an S3-compatible bucket. */
export type FileStoreConfig = { kind: 'database' } | S3StoreConfig;

export interface S3StoreConfig {
  kind: 's3';
  /** S3_BUCKET. */
  bucket: string;
  /** S3_ENDPOINT: the service's base URL (default AWS's regional endpoint). */
  endpoint: string;
  /** S3_REGION (default us-east-1): the region requests are signed for. */
  region: string;
  /** S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY (or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), S3_SESSION_TOKEN. */
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string | null;
  /** S3_FORCE_PATH_STYLE: the bucket in the path (`endpoint/bucket/key`, most S3-compatible servers) rather than the host name. */
  forcePathStyle: boolean;
  /** S3_KEY_PREFIX (default `files/`): put before every object key, so the bucket may be shared. */
  keyPrefix: string;
}

export class FileStoreConfigError extends SettingError {
  override name = 'FileStoreConfigError';
}

function readSwitch(raw: string | undefined, name: string, fallback: boolean): boolean {
  if (raw === undefined) return fallback;
  if (raw === 'on' || raw === 'true' || raw === '1') return true;
  if (raw === 'off' || raw === 'false' || raw === '0') return false;
  throw new FileStoreConfigError(`${name} must be on or off, got "${raw}"`);
}

/**
 * FILE_STORE is `database` or `s3`; unset, it is `s3` when S3_BUCKET is set and `database` otherwise. A bucket needs
 * its credentials: a missing one stops the start rather than failing each upload.
 */
export function readFileStoreConfig(read: (name: string) => string | undefined): FileStoreConfig {
  const bucket = read('S3_BUCKET');
  const kind = read('FILE_STORE') ?? (bucket === undefined ? 'database' : 's3');
  if (kind === 'database') return { kind };
  if (kind !== 's3') throw new FileStoreConfigError(`FILE_STORE must be database or s3, got "${kind}"`);
  if (bucket === undefined || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new FileStoreConfigError('FILE_STORE=s3 needs S3_BUCKET, a bucket name (3 to 63 lower-case letters, digits, dots and hyphens)');
  const region = read('S3_REGION') ?? read('AWS_REGION') ?? 'us-east-1';
  if (!/^[a-z0-9-]{1,40}$/.test(region)) throw new FileStoreConfigError(`S3_REGION must be a region name, got "${region}"`);
  const endpoint = read('S3_ENDPOINT') ?? `https://s3.${region}.amazonaws.com`;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new FileStoreConfigError(`S3_ENDPOINT must be an http(s) URL, got "${endpoint}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FileStoreConfigError(`S3_ENDPOINT must be an http(s) URL, got "${endpoint}"`);
  const accessKeyId = read('S3_ACCESS_KEY_ID') ?? read('AWS_ACCESS_KEY_ID');
  const secretAccessKey = read('S3_SECRET_ACCESS_KEY') ?? read('AWS_SECRET_ACCESS_KEY');
  if (accessKeyId === undefined || secretAccessKey === undefined) throw new FileStoreConfigError('FILE_STORE=s3 needs S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY');
  const keyPrefix = read('S3_KEY_PREFIX') ?? 'files/';
  if (keyPrefix.length > 200 || !/^[\w./-]*$/.test(keyPrefix)) throw new FileStoreConfigError('S3_KEY_PREFIX may hold only letters, digits, _ . / - (at most 200)');
  return {
    kind, bucket, region, accessKeyId, secretAccessKey, keyPrefix,
    endpoint: url.toString().replace(/\/+$/, ''),
    sessionToken: read('S3_SESSION_TOKEN') ?? read('AWS_SESSION_TOKEN') ?? null,
    // A custom endpoint is most often an S3-compatible server addressed by path (MinIO, Ceph, R2 take either).
    forcePathStyle: readSwitch(read('S3_FORCE_PATH_STYLE'), 'S3_FORCE_PATH_STYLE', read('S3_ENDPOINT') !== undefined),
  };
}
