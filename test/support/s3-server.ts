/**
 * A real S3-compatible server (s3rver) on 127.0.0.1, on a free port, with one bucket. s3rver checks only the access
 * key of a SigV4 request, so a front checks each signature first with the AWS SDK's own signer (@smithy/signature-v4)
 * and answers 403 SignatureDoesNotMatch as S3 does when it differs.
 */
import { createHash, createHmac } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SignatureV4 } from '@smithy/signature-v4';
import type { SourceData } from '@smithy/types';
import S3rver from 's3rver';

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  /** The gateway settings that keep file bytes in this bucket. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** s3rver's one account. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/** SHA-256 and its HMAC on node:crypto, in the shape the AWS signer takes. */
class Sha256 {
  #hash;
  constructor(secret?: SourceData) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', typeof secret === 'string' ? Buffer.from(secret) : ArrayBuffer.isView(secret) ? Buffer.from(secret.buffer, secret.byteOffset, secret.byteLength) : Buffer.from(secret));
  }
  update(data: Uint8Array): void {
    this.#hash.update(data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.#hash.digest());
  }
  reset(): void {
    throw new Error('not used');
  }
}

/** Whether the request's Authorization is what the AWS SDK's signer computes for it with s3rver's secret. */
async function signatureMatches(request: IncomingMessage): Promise<boolean> {
  const authorization = request.headers.authorization ?? '';
  const parsed = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/.exec(authorization);
  if (parsed === null || parsed[1] !== S3RVER_CREDENTIALS.accessKeyId) return false;
  const signedNames = (parsed[4] as string).split(';');
  const headers: Record<string, string> = {};
  for (const name of signedNames) headers[name] = String(request.headers[name] ?? '');
  const url = new URL(request.url ?? '/', `http://${request.headers.host ?? ''}`);
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = value;
  const signer = new SignatureV4({ credentials: S3RVER_CREDENTIALS, region: parsed[3] as string, service: 's3', sha256: Sha256, uriEscapePath: false, applyChecksum: false });
  const stamp = headers['x-amz-date'] ?? '';
  const date = new Date(`${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`);
  const signed = await signer.sign({ method: request.method ?? 'GET', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query, headers }, { signingDate: date, signableHeaders: new Set(signedNames) });
  return signed.headers.authorization === authorization;
}

export async function startS3Server(bucket = 'unigate-files'): Promise<TestS3Server> {
  const directory = await mkdtemp(path.join(tmpdir(), 'unigate-s3-'));
  const s3rver = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }], allowMismatchedSignatures: false });
  // s3rver's bucket set-up runs with run(); its request handler then serves behind the signature check.
  const inner = await s3rver.run();
  const handler = s3rver.getMiddleware();
  const front = createServer((request, response) => {
    void signatureMatches(request).then((matches) => {
      if (matches) return handler(request, response);
      response.writeHead(403, { 'content-type': 'application/xml' });
      response.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided.</Message></Error>');
    });
  });
  front.listen(0, '127.0.0.1');
  await once(front, 'listening');
  const endpoint = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  void inner;
  return {
    endpoint,
    bucket,
    env: {
      FILE_STORE: 's3', S3_BUCKET: bucket, S3_ENDPOINT: endpoint, S3_REGION: 'us-east-1', S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId, S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey, S3_KEY_PREFIX: 'test/files/',
    },
    async close() {
      front.closeAllConnections();
      await new Promise((resolve) => front.close(resolve));
      await s3rver.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
