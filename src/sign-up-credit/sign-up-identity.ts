import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';

/**
 * What stands for one person when the sign-up credit is given: the verified email and the address the person came
 * from, each hashed (the credit's claims outlive an account's deletion, so they keep no personal data in clear).
 */

/** The mailbox behind an email: lower case, without a `+tag` (`ann+2@example.com` is `ann@example.com`'s mailbox). */
export function mailboxOf(email: string): string {
  const [local = '', domain = ''] = email.trim().toLowerCase().split(/@(?=[^@]*$)/);
  return `${local.replace(/\+.*$/, '')}@${domain}`;
}

export function signUpEmailHash(email: string): string {
  return createHash('sha256').update(`signup-email:${mailboxOf(email)}`).digest('hex');
}

/** An IPv6 address counts by its /64 (one subscriber's network); IPv4 (also IPv4-mapped) by the address. */
export function addressKey(ip: string): string {
  const address = ip.trim().toLowerCase().replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups] : headGroups;
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

export function signUpAddressHash(ip: string): string {
  return createHash('sha256').update(`signup-ip:${addressKey(ip)}`).digest('hex');
}
