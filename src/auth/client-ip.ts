import type { IncomingMessage } from 'node:http';
import type { TrustProxy } from '../config/gateway-config.js';
import { IpRangeSet, normalizeIp } from './ip-ranges.js';

export type ClientIpResolver = (request: IncomingMessage) => string;

/**
 * The caller's IP. X-Forwarded-For counts only when TRUST_PROXY says so: `all` takes its left-most entry;
 * a list of proxy ranges walks it from the right, skipping trusted proxies, and stops at the first untrusted hop.
 */
export function createClientIpResolver(trustProxy: TrustProxy): ClientIpResolver {
  const peer = (request: IncomingMessage): string => normalizeIp(request.socket.remoteAddress ?? '');
  if (trustProxy.mode === 'none') return peer;
  if (trustProxy.mode === 'all') {
    return (request) => {
      const forwarded = forwardedChain(request);
      return forwarded[0] ?? peer(request);
    };
  }
  const trusted = new IpRangeSet(trustProxy.ranges);
  return (request) => {
    let address = peer(request);
    if (!trusted.has(address)) return address;
    const forwarded = forwardedChain(request);
    for (let index = forwarded.length - 1; index >= 0; index -= 1) {
      address = forwarded[index] as string;
      if (!trusted.has(address)) return address;
    }
    return address;
  };
}

function forwardedChain(request: IncomingMessage): string[] {
  const header = request.headers['x-forwarded-for'];
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value === undefined) return [];
  return value.split(',').map((entry) => normalizeIp(entry.trim())).filter((entry) => entry !== '');
}
