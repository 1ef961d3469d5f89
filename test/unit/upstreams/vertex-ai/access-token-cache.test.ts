import { createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../src/shared/clock.js';
import { HttpTransport } from '../../../../src/upstreams/http-transport.js';
import { UpstreamAuthorizationError } from '../../../../src/upstreams/upstream-authorization-error.js';
import { AccessTokenCache, REFRESH_MARGIN_MS, signAssertion } from '../../../../src/upstreams/vertex-ai/access-token-cache.js';
import { serviceAccountOf } from '../../../../src/upstreams/vertex-ai/service-account.js';
import { startMockVertexUpstream, type MockVertexUpstream } from '../../../support/mock-vertex-upstream.js';

/** Token refresh against the mock's OAuth endpoint (a real listener), with the clock moved by hand. */
let mock: MockVertexUpstream;
let http: HttpTransport;
let key: string;

beforeAll(async () => {
  mock = await startMockVertexUpstream({ tokenLifetimeSeconds: 3600 });
  http = new HttpTransport();
  key = JSON.stringify(mock.serviceAccount);
});

afterAll(async () => {
  await http?.close();
  await mock?.close();
});

describe('the service-account assertion', () => {
  it('is an RS256 JWT over the key’s claims, verifiable with its public key', () => {
    const account = serviceAccountOf(key);
    const assertion = signAssertion(account, 1_700_000_000);
    const [header = '', claims = '', signature = ''] = assertion.split('.');
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'mock-key-1' });
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString())).toEqual({
      iss: mock.serviceAccount.client_email,
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      aud: mock.tokenUri,
      iat: 1_700_000_000,
      exp: 1_700_003_600,
    });
    expect(verify('RSA-SHA256', Buffer.from(`${header}.${claims}`), createPublicKey(account.privateKey), Buffer.from(signature, 'base64url'))).toBe(true);
  });
});

describe('AccessTokenCache', () => {
  it('caches a token until shortly before it expires, then fetches a new one', async () => {
    const clock = new ManualClock(Date.now());
    const cache = new AccessTokenCache(http, clock);
    const account = serviceAccountOf(key);
    const before = mock.tokenRequests;
    const first = await cache.token(key, account);
    expect(first).toMatch(/^ya29\.mock-\d+$/);
    clock.advance(3600_000 - REFRESH_MARGIN_MS - 1000);
    expect(await cache.token(key, account)).toBe(first);
    expect(mock.tokenRequests).toBe(before + 1);
    clock.advance(2000);
    const second = await cache.token(key, account);
    expect(second).not.toBe(first);
    expect(mock.tokenRequests).toBe(before + 2);
  });

  it('makes one token request for many concurrent callers', async () => {
    const cache = new AccessTokenCache(http, new ManualClock(Date.now()));
    const account = serviceAccountOf(key);
    const before = mock.tokenRequests;
    const tokens = await Promise.all(Array.from({ length: 20 }, () => cache.token(key, account)));
    expect(new Set(tokens).size).toBe(1);
    expect(mock.tokenRequests).toBe(before + 1);
  });

  it('replaces a refused token once, however many callers saw it refused', async () => {
    const cache = new AccessTokenCache(http, new ManualClock(Date.now()));
    const account = serviceAccountOf(key);
    const refused = await cache.token(key, account);
    const before = mock.tokenRequests;
    const renewed = await Promise.all(Array.from({ length: 5 }, () => cache.token(key, account, refused)));
    expect(new Set(renewed).size).toBe(1);
    expect(renewed[0]).not.toBe(refused);
    expect(mock.tokenRequests).toBe(before + 1);
    // A caller that saw the old token refused after the renewal gets the new one, without another request.
    expect(await cache.token(key, account, refused)).toBe(renewed[0]);
    expect(mock.tokenRequests).toBe(before + 1);
  });

  it('tells a refused service account from an unreachable token endpoint, and caches neither', async () => {
    const cache = new AccessTokenCache(http, new ManualClock(Date.now()));
    const account = serviceAccountOf(key);
    mock.setFault({ kind: 'invalid-grant', times: 1 });
    await expect(cache.token(key, account)).rejects.toMatchObject({ name: 'UpstreamAuthorizationError', kind: 'rejected' });
    mock.setFault({ kind: 'token-endpoint-down', times: 1 });
    await expect(cache.token(key, account)).rejects.toBeInstanceOf(UpstreamAuthorizationError);
    mock.setFault({ kind: 'token-endpoint-down', times: 1 });
    await expect(cache.token(key, account)).rejects.toMatchObject({ kind: 'unreachable' });
    expect(await cache.token(key, account)).toMatch(/^ya29\.mock-\d+$/);
  });
});
