import { describe, expect, it } from 'vitest';
import { IpRangeSet, normalizeIp, validateIpRange } from '../../../src/auth/ip-ranges.js';

describe('validateIpRange', () => {
  it.each([
    '10.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '255.255.255.255/32', '192.168.1.0/24',
    '::1', '::', '2001:db8::/32', '::/0', '::/128', 'fd00::/8', '::ffff:10.0.0.0/104', '2001:0db8:0000:0000:0000:0000:0000:0001',
  ])('accepts %s', (entry) => {
    expect(validateIpRange(entry)).toBeNull();
  });

  it.each(['abc', '', '10.0.0', '10.0.0.256', '10.0.0.0/8/8', 'localhost', '/8', '2001:db8:::1', ' 10.0.0.1', '10.0.0.1 '])('rejects %j as not an address', (entry) => {
    expect(validateIpRange(entry)).toBe(`"${entry}" is not an IP address or CIDR range`);
  });

  it.each(['10.0.0.0/33', '10.0.0.0/', '10.0.0.0/-1', '10.0.0.0/a', '10.0.0.0/1000', '10.0.0.0/ 8', '10.0.0.0/8.0', '::/129', '2001:db8::/200'])(
    'rejects %j for its prefix length',
    (entry) => {
      expect(validateIpRange(entry)).toBe(`"${entry}" has an invalid prefix length`);
    },
  );
});

describe('normalizeIp', () => {
  it('unwraps IPv4-mapped IPv6 addresses', () => {
    expect(normalizeIp('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(normalizeIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
  });

  it('leaves everything else alone', () => {
    for (const address of ['10.1.2.3', '2001:db8::1', '::1', '::ffff:', '::ffff:abc', '::ffff:10.0.0', '', 'garbage']) expect(normalizeIp(address)).toBe(address);
  });
});

describe('IpRangeSet', () => {
  it('matches IPv4 CIDR ranges up to their edges', () => {
    const set = new IpRangeSet(['10.0.0.0/8', '192.168.1.0/24']);
    for (const inside of ['10.0.0.0', '10.255.255.255', '10.1.2.3', '192.168.1.0', '192.168.1.255']) expect(set.has(inside)).toBe(true);
    for (const outside of ['9.255.255.255', '11.0.0.0', '192.168.0.255', '192.168.2.0', '8.8.8.8']) expect(set.has(outside)).toBe(false);
  });

  it('matches single IPv4 addresses exactly', () => {
    const set = new IpRangeSet(['203.0.113.7']);
    expect(set.has('203.0.113.7')).toBe(true);
    expect(set.has('203.0.113.8')).toBe(false);
  });

  it('matches IPv6 CIDR ranges and addresses in any notation', () => {
    const set = new IpRangeSet(['2001:db8::/32', '::1']);
    expect(set.has('2001:db8::1')).toBe(true);
    expect(set.has('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff')).toBe(true);
    expect(set.has('2001:0db8:0000:0000:0000:0000:0000:0001')).toBe(true);
    expect(set.has('2001:db9::1')).toBe(false);
    expect(set.has('::1')).toBe(true);
    expect(set.has('::2')).toBe(false);
  });

  it('matches IPv4-mapped IPv6 callers against IPv4 rules', () => {
    const set = new IpRangeSet(['10.0.0.0/8']);
    expect(set.has('::ffff:10.9.8.7')).toBe(true);
    expect(set.has('::ffff:11.0.0.1')).toBe(false);
  });

  it('keeps the families apart', () => {
    expect(new IpRangeSet(['0.0.0.0/0']).has('::1')).toBe(false);
    expect(new IpRangeSet(['0.0.0.0/0']).has('8.8.8.8')).toBe(true);
    expect(new IpRangeSet(['::/0']).has('2001:db8::5')).toBe(true);
    expect(new IpRangeSet(['2001:db8::/32']).has('10.0.0.1')).toBe(false);
  });

  it('never matches something that is not an address', () => {
    const set = new IpRangeSet(['0.0.0.0/0', '::/0']);
    for (const junk of ['', 'garbage', '10.0.0.256', 'unknown']) expect(set.has(junk)).toBe(false);
  });

  it('is empty for no entries', () => {
    expect(new IpRangeSet([]).has('127.0.0.1')).toBe(false);
  });
});
