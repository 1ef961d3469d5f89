import { authenticate } from '../http/authenticate.js';
import { readBody } from '../http/read-body.js';
import type { RouteHandler } from '../http/request-context.js';
import type { GatewayServices } from '../services.js';
import { messagesMcpWire } from './messages-mcp.js';
import type { McpToolWire } from './mcp-tool-wire.js';
import { responsesMcpWire } from './responses-mcp.js';

/** The families whose chat requests can name MCP servers, by their chat endpoint's protocol label (its usage-log label). */
const MCP_TOOL_WIRES: Readonly<Record<string, McpToolWire>> = {
  'openai-responses': responsesMcpWire,
  'anthropic-messages': messagesMcpWire,
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
    await wire.serve({ services, context, chat, key, account, rounds: context.inProcess ?? { key, account }, body: body as Record<string, unknown> });
  };
}
