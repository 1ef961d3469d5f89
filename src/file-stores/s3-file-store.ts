import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Agent, request, type Dispatcher } from 'undici';
import type { S3StoreConfig } from '../config/file-store-config.js';
import type { FileBody, FileContentStore } from '../domain/files.js';
import { EMPTY_PAYLOAD_SHA256, signV4 } from './sign-v4.js';

/** Deletes sent at once when many files go together (an expiry sweep). */
const DELETE_CONCURRENCY = 8;

export class S3StoreError extends Error {
  override name = 'S3StoreError';
}

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The `<Code>` of an S3 error document, for the log and the error (never the request's credentials). */
async function errorCode(body: Dispatcher.ResponseData['body']): Promise<string> {
  const text = (await body.text()).slice(0, 2000);
  return /<Code>([^<]{1,100})<\/Code>/.exec(text)?.[1] ?? 'no error code';
}

/**
 * File bytes kept as objects of an S3-compatible bucket, one object per file under `keyPrefix` + the file's id. Every
 * request is signed with SigV4; the payload's SHA-256 is signed too (a spooled upload is hashed from disk, then sent
 * from disk, never held in memory). Which account owns a file is the database's to say: the routes find the file's
 * record for the caller's account before they come here, and object keys are the gateway's own ids.
 */
export function createS3FileStore(config: S3StoreConfig, now: () => Date = () => new Date()): FileContentStore & { close(): Promise<void> } {
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 16 });
  const base = new URL(config.endpoint);
  const credentials = { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey, sessionToken: config.sessionToken };
  const scope = { region: config.region, service: 's3' };

  const objectUrl = (fileId: string): URL => {
    const key = `${config.keyPrefix}${fileId}`.split('/').map(encodeURIComponent).join('/');
    const path = base.pathname.replace(/\/+$/, '');
    if (config.forcePathStyle) return new URL(`${base.protocol}//${base.host}${path}/${config.bucket}/${key}`);
    return new URL(`${base.protocol}//${config.bucket}.${base.host}${path}/${key}`);
  };

  const send = (method: 'GET' | 'PUT' | 'DELETE', fileId: string, payloadHash: string, extra: Record<string, string>, body?: Dispatcher.DispatchOptions['body']) => {
    const url = objectUrl(fileId);
    const headers = signV4({ method, url, headers: { ...extra, 'x-amz-content-sha256': payloadHash }, payloadHash }, credentials, scope, now());
    return request(url, { method, headers, dispatcher, ...(body === undefined ? {} : { body }), headersTimeout: 60_000, bodyTimeout: 300_000 });
  };

  const fail = async (what: string, response: Dispatcher.ResponseData): Promise<never> => {
    throw new S3StoreError(`S3 ${what} failed: ${response.statusCode} ${await errorCode(response.body)}`);
  };

  const open = async (fileId: string): Promise<Dispatcher.ResponseData['body'] | null> => {
    const response = await send('GET', fileId, EMPTY_PAYLOAD_SHA256, {});
    if (response.statusCode === 404) {
      await response.body.dump();
      return null;
    }
    if (response.statusCode !== 200) return fail('GET', response);
    return response.body;
  };

  return {
    name: 's3',

    async put(fileId: string, content: FileBody) {
      const inMemory = content instanceof Uint8Array;
      const payloadHash = inMemory ? createHash('sha256').update(content).digest('hex') : await sha256OfFile(content.path);
      const length = inMemory ? content.byteLength : content.bytes;
      const body = inMemory ? Buffer.from(content.buffer, content.byteOffset, content.byteLength) : createReadStream(content.path);
      const response = await send('PUT', fileId, payloadHash, { 'content-length': String(length), 'content-type': 'application/octet-stream' }, body);
      if (response.statusCode !== 200) return fail('PUT', response);
      await response.body.dump();
    },

    async get(fileId: string) {
      const body = await open(fileId);
      if (body === null) return null;
      return Buffer.from(await body.arrayBuffer());
    },

    open,

    async delete(fileIds: readonly string[]) {
      for (let start = 0; start < fileIds.length; start += DELETE_CONCURRENCY) {
        await Promise.all(fileIds.slice(start, start + DELETE_CONCURRENCY).map(async (fileId) => {
          const response = await send('DELETE', fileId, EMPTY_PAYLOAD_SHA256, {});
          // An object already gone is deleted as far as the caller is concerned.
          if (response.statusCode !== 204 && response.statusCode !== 200 && response.statusCode !== 404) return fail('DELETE', response);
          await response.body.dump();
        }));
      }
    },

    async close() {
      await dispatcher.close();
    },
  };
}
