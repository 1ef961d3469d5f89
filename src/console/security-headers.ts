import type { ServerResponse } from 'node:http';

/**
 * Headers on every console API answer: never cached, never sniffed or framed, no referrer, readable only by the
 * console's own pages, and a CSP that allows nothing should a browser ever render one as a document.
 */
export function setApiSecurityHeaders(response: ServerResponse, tls: boolean): void {
  response.setHeader('cache-control', 'no-store');
  response.setHeader('pragma', 'no-cache');
  response.setHeader('x-content-type-options', 'nosniff');
  response.setHeader('x-frame-options', 'DENY');
  response.setHeader('referrer-policy', 'no-referrer');
  response.setHeader('cross-origin-resource-policy', 'same-origin');
  response.setHeader('content-security-policy', "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
  if (tls) response.setHeader('strict-transport-security', 'max-age=31536000; includeSubDomains');
}
