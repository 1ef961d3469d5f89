import type { Account, ApiKey } from '../domain/records.js';
import { authenticate } from '../http/authenticate.js';
import { readBody } from '../http/read-body.js';
import type { RequestContext, RouteHandler } from '../http/request-context.js';
import type { GatewayServices } from '../services.js';
import { messagesMcpWire } from './messages-mcp.js';
import { responsesMcpWire } from './responses-mcp.js';

/** What a family's MCP loop works with: the caller, checked, and the chat route each round goes through. */
export interface McpToolCall {
  services: GatewayServices;
  context: RequestContext;
  chat: RouteHandler;
  key: ApiKey;
  account: Account;
  body: Record<string, unknown>;
}

/** How one family's chat requests name MCP servers and how the gateway serves them. */
export interface McpToolWire {
  /** A cheap look at the bytes: false when the body cannot name an MCP server (then it is never parsed here). */
  mayAsk(body: Buffer): boolean;
  /** Whether the parsed body names MCP servers for the gateway to serve. */
  asks(body: Record<string, unknown>): boolean;
  serve(call: McpToolCall): Promise<void>;
}

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
    const { key, account } = await authenticate(context, services);
    await wire.serve({ services, context, chat, key, account, body: body as Record<string, unknown> });
  };
}
