import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../errors/gateway-error.js';
import { callerHeaders, type RequestedServer } from './offered-servers.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

export function badRequest(param: string, message: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}

function stringList(value: unknown, param: string): string[] {
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) throw badRequest(param, `'${param}' must be a list of tool names.`);
  return value as string[];
}

/** A filter of the Responses `mcp` tool (`{ tool_names, read_only }`) as a test of one tool; null when absent. */
function toolFilter(raw: unknown, param: string): ((tool: Tool) => boolean) | null {
  if (raw === undefined || raw === null) return null;
  if (Array.isArray(raw)) {
    const names = new Set(stringList(raw, param));
    return (tool) => names.has(tool.name);
  }
  if (!isObject(raw)) throw badRequest(param, `'${param}' must be a list of tool names or { tool_names, read_only }.`);
  const names = raw.tool_names === undefined ? null : new Set(stringList(raw.tool_names, `${param}.tool_names`));
  const readOnly = raw.read_only === true;
  if (names === null && !readOnly) return null;
  return (tool) => (names?.has(tool.name) ?? false) || (readOnly && tool.annotations?.readOnlyHint === true);
}

/** `require_approval`: 'always' (the default, as OpenAI's), 'never', or `{ always, never }` filters (never wins). */
function approvalRule(raw: unknown, param: string): (tool: Tool) => boolean {
  if (raw === undefined || raw === null || raw === 'always') return () => true;
  if (raw === 'never') return () => false;
  if (!isObject(raw)) throw badRequest(param, `'${param}' must be 'always', 'never' or { always, never }.`);
  const always = toolFilter(raw.always, `${param}.always`);
  const never = toolFilter(raw.never, `${param}.never`);
  return (tool) => (never?.(tool) === true ? false : always?.(tool) === true ? true : never === null);
}

/** The `mcp` tools of a Responses request, read: the servers named, their tool filters and approval rules. */
export function requestedServers(tools: unknown[]): RequestedServer[] {
  const requested: RequestedServer[] = [];
  tools.forEach((tool, index) => {
    if (!isObject(tool) || tool.type !== 'mcp') return;
    const param = `tools[${index}]`;
    if (typeof tool.server_label !== 'string' || tool.server_label === '') throw badRequest(`${param}.server_label`, `'${param}.server_label' is required.`);
    if (tool.connector_id !== undefined) throw badRequest(`${param}.connector_id`, 'Connectors are not served by this gateway: name an MCP server registered with it.');
    if (tool.server_url !== undefined && tool.server_url !== null && typeof tool.server_url !== 'string') throw badRequest(`${param}.server_url`, `'${param}.server_url' must be a string.`);
    const headers = callerHeaders(tool.headers, `${param}.headers`);
    if (typeof tool.authorization === 'string' && tool.authorization !== '') headers.Authorization = `Bearer ${tool.authorization}`;
    const allows = toolFilter(tool.allowed_tools, `${param}.allowed_tools`);
    requested.push({
      param,
      label: tool.server_label,
      url: typeof tool.server_url === 'string' ? tool.server_url : null,
      allows: allows ?? (() => true),
      needsApproval: approvalRule(tool.require_approval, `${param}.require_approval`),
      headers,
    });
  });
  return requested;
}
