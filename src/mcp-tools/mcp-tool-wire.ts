import type { Account, ApiKey } from '../domain/records.js';
import type { InProcessCaller, RequestContext, RouteHandler } from '../http/request-context.js';
import type { GatewayServices } from '../services.js';
import type { LoadOnce } from '../shared/load-once.js';

/** What a family's MCP loop works with: the caller, checked, and the chat route each round goes through. */
export interface McpToolCall {
  services: GatewayServices;
  context: RequestContext;
  chat: RouteHandler;
  key: ApiKey;
  account: Account;
  /** Who the model rounds are made for: the caller, or the in-process caller it is (a batch's line keeps its batch prices). */
  rounds: InProcessCaller;
  body: Record<string, unknown>;
}

/** How one family's chat requests name MCP servers and how the gateway serves them. */
export interface McpToolWire {
  /** A cheap look at the bytes: false when the body cannot name an MCP server (then it is never parsed here). */
  mayAsk(body: Buffer): boolean;
  /** Whether the parsed body names MCP servers for the gateway to serve. */
  asks(body: Record<string, unknown>): boolean;
  /** Serves a request that asks; its module is loaded at the family's first such request (a gateway nobody asks never loads it). */
  serve: LoadOnce<(call: McpToolCall) => Promise<void>>;
}
