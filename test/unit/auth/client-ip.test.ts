import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createClientIpResolver } from '../../../src/auth/client-ip.js';

function request(remoteAddress: string | undefined, forwardedFor?: string | string[]): IncomingMessage {
  const headers: Record<string, string | string[]> = {};
  if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
  return { socket: { remoteAddress }, headers } as unknown as IncomingMessage;
}

describe('client IP with TRUST_PROXY=none', () => {
  const resolve = createClientIpResolver({ mode: 'none' });

  it('uses the socket peer and ignores X-Forwarded-For', () => {
    expect(resolve(request('203.0.113.5', '1.2.3.4'))).toBe('203.0.113.5');
  });

  it('normalises an IPv4-mapped peer and keeps IPv6 peers', () => {
    expect(resolve(request('::ffff:203.0.113.5'))).toBe('203.0.113.5');
    expect(resolve(request('2001:db8::9'))).toBe('2001:db8::9');
  });

  it('is empty when the socket has no address (closed)', () => {
    expect(resolve(request(undefined))).toBe('');
  });
});

describe('client IP with TRUST_PROXY=all', () => {
  const resolve = createClientIpResolver({ mode: 'all' });

  it('takes the left-most X-Forwarded-For entry', () => {
    expect(resolve(request('10.0.0.2', '198.51.100.7, 10.0.0.9, 10.0.0.5'))).toBe('198.51.100.7');
  });

  it('uses the peer without X-Forwarded-For, or with only empty entries', () => {
    expect(resolve(request('::ffff:10.0.0.2'))).toBe('10.0.0.2');
    expect(resolve(request('10.0.0.2', ' , '))).toBe('10.0.0.2');
  });

  it('trims, skips empty entries, normalises mapped addresses and joins repeated headers', () => {
    expect(resolve(request('10.0.0.2', ' , ::ffff:198.51.100.7 ,10.0.0.5'))).toBe('198.51.100.7');
    expect(resolve(request('10.0.0.2', ['198.51.100.1, 10.0.0.3', '10.0.0.4']))).toBe('198.51.100.1');
  });
});

describe('client IP with a trusted proxy list', () => {
  const resolve = createClientIpResolver({ mode: 'list', ranges: ['10.0.0.0/8', 'fd00::/8', '192.0.2.1'] });

  it('ignores a spoofed X-Forwarded-For when the peer is not a trusted proxy', () => {
    expect(resolve(request('203.0.113.9', '1.2.3.4'))).toBe('203.0.113.9');
    expect(resolve(request('::ffff:203.0.113.9', '10.0.0.1'))).toBe('203.0.113.9');
  });

  it('walks X-Forwarded-For from the right, skipping trusted hops, stopping at the first untrusted one', () => {
    // The client sent "6.6.6.6" itself; the proxies appended the real client and an inner proxy.
    expect(resolve(request('10.0.0.2', '6.6.6.6, 198.51.100.7, 10.0.0.5'))).toBe('198.51.100.7');
    expect(resolve(request('192.0.2.1', '198.51.100.7, 192.0.2.1, 10.1.1.1'))).toBe('198.51.100.7');
  });

  it('accepts a trusted IPv4-mapped or IPv6 peer', () => {
    expect(resolve(request('::ffff:10.0.0.2', '198.51.100.7'))).toBe('198.51.100.7');
    expect(resolve(request('fd00::1', '2001:db8::7, fd12::3'))).toBe('2001:db8::7');
  });

  it('uses the trusted peer itself without X-Forwarded-For', () => {
    expect(resolve(request('10.0.0.2'))).toBe('10.0.0.2');
  });

  it('ends at the left-most entry when every hop is trusted', () => {
    expect(resolve(request('10.0.0.2', '10.0.0.7, 10.0.0.5'))).toBe('10.0.0.7');
  });

  it('treats a non-address hop as untrusted and stops there', () => {
    expect(resolve(request('10.0.0.2', '198.51.100.7, unknown, 10.0.0.5'))).toBe('unknown');
  });
});
