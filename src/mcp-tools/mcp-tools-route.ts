import { authenticate } from '../http/authenticate.js';
import { readBody } from '../http/read-body.js';
import type { RouteHandler } from '../http/request-context.js';
import type { GatewayServices } from '../services.js';
import { loadOnce } from '../shared/load-once.js';
import type { McpToolWire } from './mcp-tool-wire.js';

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The families whose chat requests can name MCP servers, by their chat endpoint's protocol label (its usage-log label). */
const MCP_TOOL_WIRES: Readonly<Record<string, McpToolWire>> = {
  // The Responses API's `mcp` tool.
  'openai-responses': {
    mayAsk: (body) => body.includes('"mcp"'),
    asks: (body) => Array.isArray(body.tools) && body.tools.some((tool) => isObject(tool) && tool.type === 'mcp'),
    serve: loadOnce(async () => (await import('./responses-mcp.js')).serveResponses),
  },
  // Anthropic's MCP connector (`mcp_servers`).
  'anthropic-messages': {
    mayAsk: (body) => body.includes('"mcp_servers"'),
    asks: (body) => Array.isArray(body.mcp_servers) && body.mcp_servers.length > 0,
    serve: loadOnce(async () => (await import('./messages-mcp.js')).serveMessages),
  },
};

/**
 * A chat route in front of which the gateway serves the MCP tools a request names (the Responses API's `mcp` tool,
 * Anthropic's `mcp_servers`) for whatever model answers it. Any other request goes to the chat route as it came,
 * its body read once.
 */
export function withMcpTools(services: GatewayServices, protocol: string, chat: RouteHandler): RouteHandler {
  const wire = MCP_TOOL_WIRES[protocol];
  if (wire === undefined) return chat;
  return async (context) => {
    // The key is checked before the body is read, as the chat route itself does; the chat route then takes it as checked.
    const { key, account } = await authenticate(context, services);
    context.authenticated = { key, account };
    const bytes = await readBody(context, services.config.maxBodyBytes);
    context.preReadBody = bytes;
    if (!wire.mayAsk(bytes)) return chat(context);
    let body: unknown;
    try {
      body = JSON.parse(bytes.toString('utf8'));
    } catch {
      // The chat route answers a body that is not JSON as it answers any.
      return chat(context);
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body) || !wire.asks(body as Record<string, unknown>)) return chat(context);
    const serve = wire.serve.loaded() ?? await wire.serve.get();
    await serve({ services, context, chat, key, account, rounds: context.inProcess ?? { key, account }, body: body as Record<string, unknown> });
  };
}
