import { BlockList, isIP } from 'node:net';

/** `::ffff:10.0.0.1` → `10.0.0.1`, so IPv4 callers on a dual-stack socket match IPv4 rules. */
export function normalizeIp(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** Validates an IP address or CIDR range (IPv4 or IPv6); returns an error message or null. */
export function validateIpRange(entry: string): string | null {
  const [address, prefix, extra] = entry.split('/');
  if (address === undefined || extra !== undefined) return `"${entry}" is not an IP address or CIDR range`;
  const version = isIP(address);
  if (version === 0) return `"${entry}" is not an IP address or CIDR range`;
  if (prefix === undefined) return null;
  const bits = Number(prefix);
  const max = version === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || bits > max) return `"${entry}" has an invalid prefix length`;
  return null;
}

/** A compiled set of IP addresses and CIDR ranges. Entries must have passed `validateIpRange`. */
export class IpRangeSet {
  readonly #list = new BlockList();

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address = '', prefix] = entry.split('/');
      const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.#list.addAddress(address, type);
      else this.#list.addSubnet(address, Number(prefix), type);
    }
  }

  has(ip: string): boolean {
    const address = normalizeIp(ip);
    const version = isIP(address);
    if (version === 0) return false;
    return this.#list.check(address, version === 6 ? 'ipv6' : 'ipv4');
  }
}
