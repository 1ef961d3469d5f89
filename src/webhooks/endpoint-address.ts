import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { isIP } from 'node:net';
import { IpRangeSet, normalizeIp } from '../auth/ip-ranges.js';
import type { WebhookConfig } from '../config/webhook-config.js';
import { hasUrlCredentials } from '../shared/url-credentials.js';

/** Addresses a webhook never reaches unless the operator allows private addresses: loopback, private, link-local, reserved. */
const NOT_PUBLIC = new IpRangeSet([
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24',
  '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4',
  '::/128', '::1/128', '64:ff9b::/96', '100::/64', 'fc00::/7', 'fe80::/10', 'ff00::/8',
]);
const LOOPBACK = new IpRangeSet(['127.0.0.0/8', '::1/128']);

export const MAX_ENDPOINT_URL_LENGTH = 2000;

export type AddressPolicy = Pick<WebhookConfig, 'allowHttpLoopback' | 'allowPrivateAddresses'>;

function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname);
  return host === 'localhost' || (isIP(host) !== 0 && LOOPBACK.has(host));
}

/**
 * Why an endpoint URL is refused, or null: it must be https (http only to the loopback when the operator allows it),
 * carry no user name or password, no fragment, and name no private address unless the operator allows those.
 */
export function endpointUrlRefusal(url: string, policy: AddressPolicy): string | null {
  if (url.length > MAX_ENDPOINT_URL_LENGTH) return `The URL is longer than ${MAX_ENDPOINT_URL_LENGTH} characters.`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'The URL is not an absolute URL.';
  }
  if (hasUrlCredentials(url)) return 'The URL must not carry a user name or password.';
  if (parsed.hash !== '') return 'The URL must not have a fragment (#…).';
  if (parsed.protocol === 'http:') {
    if (!(policy.allowHttpLoopback && isLoopbackHost(parsed.hostname))) return 'The URL must use https.';
  } else if (parsed.protocol !== 'https:') {
    return 'The URL must use https.';
  }
  const host = bareHost(parsed.hostname);
  if (isIP(host) !== 0) {
    const refusal = addressRefusal(host, policy);
    if (refusal !== null) return refusal;
  }
  return null;
}

/** Why a resolved destination address is refused at delivery time, or null. */
export function addressRefusal(address: string, policy: AddressPolicy): string | null {
  const ip = normalizeIp(address);
  if (policy.allowPrivateAddresses) return null;
  if (policy.allowHttpLoopback && LOOPBACK.has(ip)) return null;
  return NOT_PUBLIC.has(ip) ? `The address ${ip} is not a public address; only public addresses are reached.` : null;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for an HTTP agent's connections that checks every address a host name resolves to, as the connection
 * resolves it (so a name that resolves to a public address when it is registered and to a private one later, DNS
 * rebinding, is still refused): any refused address fails the connection with `refusedError(reason)`.
 */
export function addressCheckedLookup(policy: AddressPolicy, refusedError: (reason: string) => Error) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, []);
      for (const entry of addresses) {
        const refusal = addressRefusal(entry.address, policy);
        if (refusal !== null) return callback(refusedError(refusal), []);
      }
      if (options.all === true) return callback(null, addresses);
      const first = addresses[0];
      if (first === undefined) return callback(refusedError('The host name has no address.'), []);
      return callback(null, first.address, first.family);
    });
  };
}

/** Why `hostname` (an IP literal, or a name resolved now) may not be reached, or null. */
export async function hostRefusal(hostname: string, policy: AddressPolicy): Promise<string | null> {
  const host = bareHost(hostname);
  if (isIP(host) !== 0) return addressRefusal(host, policy);
  let addresses: LookupAddress[];
  try {
    addresses = await dnsLookupAll(host, { all: true });
  } catch {
    return `The host name ${host} does not resolve.`;
  }
  for (const entry of addresses) {
    const refusal = addressRefusal(entry.address, policy);
    if (refusal !== null) return refusal;
  }
  return null;
}
