/** FILE_STORE and the S3 settings: defaults, the bucket implied by S3_BUCKET, and refusals that name the setting. */
import { describe, expect, it } from 'vitest';
import { FileStoreConfigError, readFileStoreConfig } from '../../../src/config/file-store-config.js';

const reader = (env: Record<string, string>) => (name: string): string | undefined => env[name];
const KEYS = { S3_ACCESS_KEY_ID: 'id', S3_SECRET_ACCESS_KEY: 'secret' };

describe('readFileStoreConfig', () => {
  it('keeps files in the database unless a bucket is named', () => {
    expect(readFileStoreConfig(reader({}))).toEqual({ kind: 'database' });
    expect(readFileStoreConfig(reader({ FILE_STORE: 'database', S3_BUCKET: 'ignored' }))).toEqual({ kind: 'database' });
  });

  it('uses AWS\'s regional endpoint by host name by default, a custom endpoint by path', () => {
    expect(readFileStoreConfig(reader({ S3_BUCKET: 'my-bucket', S3_REGION: 'eu-west-1', ...KEYS }))).toEqual({
      kind: 's3', bucket: 'my-bucket', region: 'eu-west-1', endpoint: 'https://s3.eu-west-1.amazonaws.com', forcePathStyle: false,
      accessKeyId: 'id', secretAccessKey: 'secret', sessionToken: null, keyPrefix: 'files/',
    });
    expect(readFileStoreConfig(reader({ S3_BUCKET: 'my-bucket', S3_ENDPOINT: 'http://minio:9000/', ...KEYS, S3_KEY_PREFIX: 'gw/' }))).toMatchObject({
      endpoint: 'http://minio:9000', forcePathStyle: true, region: 'us-east-1', keyPrefix: 'gw/',
    });
    expect(readFileStoreConfig(reader({ S3_BUCKET: 'my-bucket', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b', AWS_SESSION_TOKEN: 't' }))).toMatchObject({ accessKeyId: 'a', secretAccessKey: 'b', sessionToken: 't' });
  });

  it('refuses an incomplete or malformed bucket setting, naming it', () => {
    expect(() => readFileStoreConfig(reader({ FILE_STORE: 's3', ...KEYS }))).toThrow(/S3_BUCKET/);
    expect(() => readFileStoreConfig(reader({ S3_BUCKET: 'b-ok' }))).toThrow(/S3_ACCESS_KEY_ID/);
    expect(() => readFileStoreConfig(reader({ S3_BUCKET: 'Bad_Bucket', ...KEYS }))).toThrow(FileStoreConfigError);
    expect(() => readFileStoreConfig(reader({ S3_BUCKET: 'b-ok', S3_ENDPOINT: 'ftp://x', ...KEYS }))).toThrow(/S3_ENDPOINT/);
    expect(() => readFileStoreConfig(reader({ S3_BUCKET: 'b-ok', S3_FORCE_PATH_STYLE: 'maybe', ...KEYS }))).toThrow(/S3_FORCE_PATH_STYLE/);
    expect(() => readFileStoreConfig(reader({ FILE_STORE: 'disk' }))).toThrow(/FILE_STORE/);
  });
});
