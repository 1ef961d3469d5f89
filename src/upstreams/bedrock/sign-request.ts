import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { SignatureV4 } from '@smithy/signature-v4';
import type { Checksum, SourceData } from '@smithy/types';
import type { UpstreamRequest } from '../upstream-adapter.js';

function bytesOf(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/** SHA-256 (or its HMAC, given a secret) on node:crypto, in the shape the SigV4 signer takes. */
class NodeSha256 implements Checksum {
  #hash: Hash | Hmac;

  constructor(private readonly secret?: SourceData) {
    this.#hash = this.#create();
  }

  update(data: Uint8Array): void {
    this.#hash.update(data);
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.#hash.digest());
  }

  reset(): void {
    this.#hash = this.#create();
  }

  #create(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(this.secret));
  }
}

export interface SigningIdentity {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SigningScope {
  region: string;
  service: string;
}

/** Signers by identity and scope: each keeps its derived signing keys, so a key is derived once a day. */
const signers = new Map<string, SignatureV4>();
const MAX_SIGNERS = 256;

/** The signer's module (~2 MiB of heap), loaded with the first Bedrock request rather than at start-up. */
let signerModule: Promise<{ SignatureV4: typeof SignatureV4 }> | null = null;

async function signerFor(identity: SigningIdentity, scope: SigningScope): Promise<SignatureV4> {
  const cacheKey = `${identity.accessKeyId}\n${identity.secretAccessKey}\n${identity.sessionToken ?? ''}\n${scope.region}\n${scope.service}`;
  let signer = signers.get(cacheKey);
  if (signer === undefined) {
    const credentials = identity.sessionToken === undefined
      ? { accessKeyId: identity.accessKeyId, secretAccessKey: identity.secretAccessKey }
      : { accessKeyId: identity.accessKeyId, secretAccessKey: identity.secretAccessKey, sessionToken: identity.sessionToken };
    signerModule ??= import('@smithy/signature-v4');
    const { SignatureV4 } = await signerModule;
    signer = new SignatureV4({ credentials, region: scope.region, service: scope.service, sha256: NodeSha256, uriEscapePath: true, applyChecksum: false });
    if (signers.size >= MAX_SIGNERS) signers.clear();
    signers.set(cacheKey, signer);
  }
  return signer;
}

/**
 * Signs an upstream request with AWS Signature Version 4 (the `Authorization`, `X-Amz-Date` and, with temporary
 * credentials, `X-Amz-Security-Token` headers), as the AWS SDKs do: every header sent is signed, the path is
 * escaped once more for the canonical request, and the body's SHA-256 is part of the signature.
 */
export async function signRequest(request: UpstreamRequest, identity: SigningIdentity, scope: SigningScope, signingDate?: Date): Promise<UpstreamRequest> {
  const url = new URL(request.url);
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    const existing = query[name];
    if (existing === undefined) query[name] = value;
    else query[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  const headers: Record<string, string> = { ...request.headers, host: url.host };
  const signed = await (await signerFor(identity, scope)).sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port === '' ? {} : { port: Number(url.port) }),
      path: url.pathname,
      query,
      headers,
      body: request.body ?? undefined,
    },
    signingDate === undefined ? {} : { signingDate },
  );
  return { ...request, headers: signed.headers };
}
