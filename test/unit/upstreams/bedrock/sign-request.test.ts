import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../../../src/upstreams/bedrock/sign-request.js';

interface Vector {
  name: string;
  method: 'GET' | 'POST';
  target: string;
  headers: Array<[string, string]>;
  body: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  region: string;
  service: string;
  timestamp: string;
  signedHeaders: string;
  signature: string;
}

/** AWS's published SigV4 test suite: every vector that a Bedrock request can be (see `excluded` for the rest). */
const suite = JSON.parse(readFileSync(new URL('./__fixtures__/sigv4-test-suite.json', import.meta.url), 'utf8')) as { vectors: Vector[]; excluded: Record<string, string> };

function authorization(vector: Pick<Vector, 'credentials' | 'timestamp' | 'region' | 'service' | 'signedHeaders' | 'signature'>): string {
  const day = vector.timestamp.slice(0, 10).replace(/-/g, '');
  return `AWS4-HMAC-SHA256 Credential=${vector.credentials.accessKeyId}/${day}/${vector.region}/${vector.service}/aws4_request, SignedHeaders=${vector.signedHeaders}, Signature=${vector.signature}`;
}

describe('SigV4 signatures match the AWS test suite', () => {
  it('covers the suite', () => {
    expect(suite.vectors.length).toBeGreaterThanOrEqual(24);
    expect(suite.vectors.length + Object.keys(suite.excluded).length).toBe(38);
  });

  it.each(suite.vectors.map((vector) => [vector.name, vector] as const))('%s', async (_name, vector) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of vector.headers) if (name.toLowerCase() !== 'host') headers[name] = value;
    const host = vector.headers.find(([name]) => name.toLowerCase() === 'host')?.[1] ?? '';
    const signed = await signRequest(
      { url: `https://${host}${vector.target}`, method: vector.method, headers, body: vector.body === '' ? null : vector.body },
      vector.credentials,
      { region: vector.region, service: vector.service },
      new Date(vector.timestamp),
    );
    expect(signed.headers.authorization).toBe(authorization(vector));
    expect(signed.headers['x-amz-date']).toBe('20150830T123600Z');
    if (vector.credentials.sessionToken !== undefined) expect(signed.headers['x-amz-security-token']).toBe(vector.credentials.sessionToken);
  });
});

describe('a Bedrock request', () => {
  const identity = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
  const request = (body: string) => ({
    url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse',
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    body,
  });

  it('signs content-type, host and date, and keeps the request otherwise unchanged', async () => {
    const signed = await signRequest(request('{"messages":[]}'), identity, { region: 'us-east-1', service: 'bedrock' }, new Date('2015-08-30T12:36:00Z'));
    expect(signed.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20150830\/us-east-1\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/);
    expect(signed.url).toBe(request('').url);
    expect(signed.body).toBe('{"messages":[]}');
  });

  it('puts the body into the signature', async () => {
    const date = new Date('2015-08-30T12:36:00Z');
    const one = await signRequest(request('{"messages":[1]}'), identity, { region: 'us-east-1', service: 'bedrock' }, date);
    const two = await signRequest(request('{"messages":[2]}'), identity, { region: 'us-east-1', service: 'bedrock' }, date);
    expect(one.headers.authorization).not.toBe(two.headers.authorization);
  });
});
