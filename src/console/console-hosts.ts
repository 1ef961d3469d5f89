import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';

/** Answered whatever the Host: the load balancer's probe, and Stripe's webhook (its signature is its authentication). */
const ANY_HOST_PATHS = new Set(['/healthz', '/api/webhooks/stripe']);

function isWildcard(host: string): boolean {
  return host === '' || host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** An address as a Host header names it: IPv6 in brackets, without a zone. */
function hostName(address: string): string {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0] ?? address;
  return isIP(bare) === 6 ? `[${bare.toLowerCase()}]` : bare.toLowerCase();
}

/**
 * The Host values the console answers when CONSOLE_URL is unset: the loopback names, and HOST (every interface's
 * address when HOST is a wildcard), each with the console's port (and without it on port 80, as browsers send it).
 */
export function listenedHosts(host: string, port: string): Set<string> {
  const names = new Set(['127.0.0.1', 'localhost', '[::1]']);
  if (isWildcard(host)) {
    for (const addresses of Object.values(networkInterfaces())) for (const address of addresses ?? []) names.add(hostName(address.address));
  } else {
    names.add(hostName(host));
  }
  const hosts = new Set<string>();
  for (const name of names) {
    hosts.add(`${name}:${port}`);
    if (port === '80') hosts.add(name);
  }
  return hosts;
}

/**
 * Without CONSOLE_URL, a request for the console must name one of the addresses it listens on: a page on another
 * name whose DNS now points here (DNS rebinding) is refused before any route runs, and the links the console builds
 * from the Host (referral links, Stripe's return pages) can only point here. With CONSOLE_URL the console's origin is
 * that URL, whatever the Host: links use it and state changes must come from it. Null: no check.
 */
export function consoleHostCheck(configuredUrl: string | null, listenHost: string, consoleOrigin: () => string): ((context: RequestContext) => void) | null {
  if (configuredUrl !== null) return null;
  let allowed: Set<string> | null = null;
  return (context) => {
    if (ANY_HOST_PATHS.has(context.path)) return;
    // The port is known once the listener listens, before its first request.
    allowed ??= listenedHosts(listenHost, new URL(consoleOrigin()).port || '80');
    const host = context.request.headers.host?.trim().toLowerCase();
    if (host === undefined || !allowed.has(host)) {
      throw new GatewayError('misdirected_request', 'This console answers only at the addresses it listens on; the operator sets CONSOLE_URL to serve it under another name.');
    }
  };
}
