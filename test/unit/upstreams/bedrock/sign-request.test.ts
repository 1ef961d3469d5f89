import aws4 from 'aws4';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../../../src/upstreams/bedrock/sign-request.js';

/**
 * SigV4 is checked against an independent implementation (the `aws4` package): for any Bedrock-shaped request, both
 * must produce the same Authorization header, so a mistake in how we call the SDK's signer (path escaping, signed
 * headers, the body hash, the session token) cannot hide behind our own mock, which verifies with the same signer.
 */
const segment = fc.stringMatching(/^[A-Za-z0-9._:~-]{1,40}$/);
const requestShape = fc.record({
  region: fc.constantFrom('us-east-1', 'us-west-2', 'eu-central-1', 'ap-northeast-1'),
  modelId: segment,
  action: fc.constantFrom('converse', 'converse-stream'),
  body: fc.json({ maxDepth: 3 }),
  sessionToken: fc.option(fc.stringMatching(/^[A-Za-z0-9+/=]{16,64}$/), { nil: undefined }),
  secret: fc.stringMatching(/^[A-Za-z0-9+/]{40}$/),
  accessKeyId: fc.stringMatching(/^AKIA[A-Z0-9]{16}$/),
  epochSeconds: fc.integer({ min: 1_500_000_000, max: 2_000_000_000 }),
});

function amzDate(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

describe('SigV4 signatures agree with an independent signer', () => {
  it('for any Bedrock Converse request', async () => {
    await fc.assert(fc.asyncProperty(requestShape, async (shape) => {
      const date = new Date(shape.epochSeconds * 1000);
      const host = `bedrock-runtime.${shape.region}.amazonaws.com`;
      const path = `/model/${encodeURIComponent(shape.modelId)}/${shape.action}`;
      const identity = { accessKeyId: shape.accessKeyId, secretAccessKey: shape.secret, ...(shape.sessionToken === undefined ? {} : { sessionToken: shape.sessionToken }) };
      const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(shape.body)) };
      const ours = await signRequest({ url: `https://${host}${path}`, method: 'POST', headers, body: shape.body }, identity, { region: shape.region, service: 'bedrock' }, date);
      const theirs = aws4.sign({ host, path, method: 'POST', service: 'bedrock', region: shape.region, body: shape.body, headers: { ...headers, 'X-Amz-Date': amzDate(date) } }, identity);
      expect(ours.headers['x-amz-date']).toBe(amzDate(date));
      expect(ours.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIA[A-Z0-9]{16}\/\d{8}\/[a-z0-9-]+\/bedrock\/aws4_request, SignedHeaders=content-length;content-type;host;x-amz-date(;x-amz-security-token)?, Signature=[0-9a-f]{64}$/);
      expect(ours.headers.authorization).toBe((theirs.headers as Record<string, string>).Authorization);
      if (shape.sessionToken !== undefined) expect(ours.headers['x-amz-security-token']).toBe(shape.sessionToken);
    }), { numRuns: 200, seed: 20261125 });
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
