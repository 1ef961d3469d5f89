import { describe, expect, it } from 'vitest';
import { addressKey, mailboxOf, signUpAddressHash, signUpEmailHash } from '../../../src/sign-up-credit/sign-up-identity.js';

describe('sign-up identity', () => {
  it('counts a mailbox once: case, surrounding spaces and +tags do not make a new one', () => {
    expect(mailboxOf(' Ann+promo2@Example.COM ')).toBe('ann@example.com');
    expect(signUpEmailHash('ann+1@example.com')).toBe(signUpEmailHash('ANN@example.com'));
    expect(signUpEmailHash('ann@example.com')).not.toBe(signUpEmailHash('anne@example.com'));
    expect(signUpEmailHash('ann@example.com')).not.toContain('ann');
  });

  it('counts an IPv6 address by its /64 and an IPv4-mapped address as IPv4', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::5')).toBe('2001:db8:0:0::/64');
    expect(signUpAddressHash('2001:db8:1:2::7')).toBe(signUpAddressHash('2001:db8:1:2:ffff::9'));
    expect(signUpAddressHash('2001:db8:1:3::7')).not.toBe(signUpAddressHash('2001:db8:1:2::7'));
    expect(addressKey('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(signUpAddressHash('10.1.2.3')).not.toBe(signUpAddressHash('10.1.2.4'));
  });
});
