/**
 * The URIs a client of `/mcp` sees for the resources of several servers: `mcp-gateway://<server>/<original URI>`,
 * the original appended as it is (not percent-encoded). Server names are letters, digits, `_` and `-` (never `/`),
 * so the URI splits back at the first `/` after the server's name and the rest is the server's own URI, byte for
 * byte. Appending rather than encoding keeps resource templates working: a client expands the gateway's template
 * `mcp-gateway://files/file:///logs/{name}` into exactly the gateway URI of what the server's template
 * `file:///logs/{name}` expands to. `/mcp/{server}` serves one server and keeps its URIs unchanged.
 */
export const RESOURCE_URI_PREFIX = 'mcp-gateway://';

/** The URI (or URI template) a client of `/mcp` sees for `uri` of `server`. */
export function gatewayResourceUri(server: string, uri: string): string {
  return `${RESOURCE_URI_PREFIX}${server}/${uri}`;
}

/** The server and its own URI a gateway URI stands for, or null for any other URI. */
export function splitResourceUri(uri: string): { server: string; uri: string } | null {
  if (!uri.startsWith(RESOURCE_URI_PREFIX)) return null;
  const rest = uri.slice(RESOURCE_URI_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return null;
  const original = rest.slice(slash + 1);
  return original === '' ? null : { server: rest.slice(0, slash), uri: original };
}
