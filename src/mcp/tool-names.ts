/** Between a server's name and its tool's in the names the gateway shows: `<server>__<tool>`. */
export const TOOL_NAME_SEPARATOR = '__';

/** The name a client sees for `tool` of `server`. */
export function gatewayToolName(server: string, tool: string): string {
  return `${server}${TOOL_NAME_SEPARATOR}${tool}`;
}

/**
 * The server and tool a gateway name stands for, or null. Server names never contain the separator, so the name
 * splits at its first one and any `__` inside the tool's own name is kept: the mapping is reversible.
 */
export function splitToolName(name: string): { server: string; tool: string } | null {
  const at = name.indexOf(TOOL_NAME_SEPARATOR);
  if (at <= 0) return null;
  const tool = name.slice(at + TOOL_NAME_SEPARATOR.length);
  return tool === '' ? null : { server: name.slice(0, at), tool };
}
