/** SigV4 signing against AWS's published examples (the signature test suite and the S3 API reference). */
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { EMPTY_PAYLOAD_SHA256, signV4 } from '../../../src/file-stores/sign-v4.js';

const SUITE = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const S3_DOCS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const signatureOf = (headers: Record<string, string>): string => /Signature=([0-9a-f]{64})$/.exec(headers.authorization ?? '')?.[1] ?? '';

describe('signV4', () => {
  it('signs the test suite\'s get-vanilla request', () => {
    const headers = signV4({ method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: {}, payloadHash: EMPTY_PAYLOAD_SHA256 },
      SUITE, { region: 'us-east-1', service: 'service' }, new Date('2015-08-30T12:36:00Z'));
    expect(headers.authorization).toBe('AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31');
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
  });

  it('signs the test suite\'s get-vanilla-query-order-key-case request (query sorted by name)', () => {
    const headers = signV4({ method: 'GET', url: new URL('https://example.amazonaws.com/?Param2=value2&Param1=value1'), headers: {}, payloadHash: EMPTY_PAYLOAD_SHA256 },
      SUITE, { region: 'us-east-1', service: 'service' }, new Date('2015-08-30T12:36:00Z'));
    expect(signatureOf(headers)).toBe('b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500');
  });

  it('signs the S3 reference\'s GET Object example', () => {
    const headers = signV4({ method: 'GET', url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'), headers: { Range: 'bytes=0-9', 'x-amz-content-sha256': EMPTY_PAYLOAD_SHA256 }, payloadHash: EMPTY_PAYLOAD_SHA256 },
      S3_DOCS, { region: 'us-east-1', service: 's3' }, new Date('2013-05-24T00:00:00Z'));
    expect(headers.authorization).toBe('AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41');
  });

  it('signs the S3 reference\'s PUT Object example (a path character encoded, the payload hashed)', () => {
    const payloadHash = createHash('sha256').update('Welcome to Amazon S3.').digest('hex');
    expect(payloadHash).toBe('44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072');
    const headers = signV4({
      method: 'PUT', url: new URL('https://examplebucket.s3.amazonaws.com/test$file.text'), payloadHash,
      headers: { Date: 'Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class': 'REDUCED_REDUNDANCY', 'x-amz-content-sha256': payloadHash },
    }, S3_DOCS, { region: 'us-east-1', service: 's3' }, new Date('2013-05-24T00:00:00Z'));
    expect(headers.authorization).toBe('AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd');
  });

  it('adds the session token of temporary credentials and signs it', () => {
    const headers = signV4({ method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: {}, payloadHash: EMPTY_PAYLOAD_SHA256 },
      { ...SUITE, sessionToken: 'token' }, { region: 'us-east-1', service: 'service' }, new Date('2015-08-30T12:36:00Z'));
    expect(headers['x-amz-security-token']).toBe('token');
    expect(headers.authorization).toContain('SignedHeaders=host;x-amz-date;x-amz-security-token,');
  });
});
