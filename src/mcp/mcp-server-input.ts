import { z } from 'zod';
import { limitInput } from '../management/limit-input.js';
import { nonNegativeUsdInput } from '../management/money-input.js';
import { hasUrlCredentials } from '../shared/url-credentials.js';
import { MCP_OAUTH_AUTH_METHODS, MCP_TOOL_RULES, MCP_TRANSPORTS, type McpOAuthInput, type McpToolRule, type McpToolRules } from '../storage/repositories/mcp-server-repository.js';
import { TOOL_NAME_SEPARATOR } from './tool-names.js';

/**
 * A server's name: what its tools are prefixed with (`<server>__<tool>`) and the `{server}` of `/mcp/{server}`.
 * Runs of letters and digits joined by single `_` or `-`: never the separator, nor a `_` at either end that would
 * merge with it, so a prefixed name splits back at its first `__`.
 */
const serverName = z.string().min(1).max(64).regex(/^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$/, `must be letters and digits joined by single "_" or "-" (never "${TOOL_NAME_SEPARATOR}")`);

/** An http(s) URL without credentials (they go in headers, sealed) or fragment. */
const serverUrl = z.string().max(2000).refine((text) => {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hash === '' && !hasUrlCredentials(text);
  } catch {
    return false;
  }
}, 'must be an http(s) URL without user name, password or fragment');

/** Header names as HTTP allows them; values printable and single-line. Hop-by-hop and MCP's own headers are the gateway's. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'connection', 'transfer-encoding', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);
const headers = z.record(
  z.string().min(1).max(100).regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name').refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), 'is set by the gateway'),
  z.string().max(8000).regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'must be a single-line header value'),
).refine((value) => Object.keys(value).length <= 20, 'at most 20 headers');

/** A tool rule: `allowed`, `read_only` (only where the server declares the tool read-only) or `refused`. */
export const toolRuleInput = z.enum(MCP_TOOL_RULES as [McpToolRule, ...McpToolRule[]]);
/** A tool's name as its server gives it (any MCP tool name). */
const upstreamToolName = z.string().min(1).max(128);
const toolRulesInput = z.object({
  default: toolRuleInput.optional(),
  tools: z.record(upstreamToolName, toolRuleInput).refine((value) => Object.keys(value).length <= 500, 'at most 500 tools').optional(),
}).strict();

/** OAuth 2.1 client credentials: the token endpoint (an http(s) URL like a server's), the client, and what to ask for. */
const oauthInput = z.object({
  token_url: serverUrl,
  client_id: z.string().min(1).max(500),
  /** Required when credentials are first given; left out on a change, the sealed one is kept. */
  client_secret: z.string().min(1).max(4000).optional(),
  scope: z.string().min(1).max(1000).regex(/^[\x21\x23-\x5b\x5d-\x7e]+(?: [\x21\x23-\x5b\x5d-\x7e]+)*$/, 'must be space-separated scope tokens').nullable().optional(),
  audience: z.string().min(1).max(1000).nullable().optional(),
  auth_method: z.enum(MCP_OAUTH_AUTH_METHODS as [string, ...string[]]).optional(),
}).strict();

/** A program's text: no NUL (it cannot be passed to a process). */
const programText = (max: number) => z.string().max(max).refine((text) => !text.includes('\0'), 'must not contain NUL');
/** A local server's program, started without a shell: the command, its arguments and extra environment variables. */
const stdioFields = {
  command: programText(1000).refine((text) => text.trim() !== '', 'must name a program').optional(),
  args: z.array(programText(4000)).max(100).optional(),
  env: z.record(z.string().min(1).max(200).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'), programText(8000))
    .refine((value) => Object.keys(value).length <= 50, 'at most 50 variables').optional(),
};

/** What a call of a server may cost or take, and how its tools are ruled (each optional on create, null clears). */
const settings = {
  calls_per_minute: limitInput,
  concurrency: limitInput,
  price_per_call: nonNegativeUsdInput.nullable().optional(),
  log_payloads: z.boolean().optional(),
  tool_rules: toolRulesInput.optional(),
};

export const createSchema = z.object({
  name: serverName,
  url: serverUrl.optional(),
  oauth: oauthInput.nullable().optional(),
  ...stdioFields,
  transport: z.enum(MCP_TRANSPORTS as [string, ...string[]]).optional(),
  headers: headers.optional(),
  public: z.boolean().optional(),
  enabled: z.boolean().optional(),
  ...settings,
}).strict();
/** A change takes the same fields as a creation, the name among them optional too. */
export const patchSchema = createSchema.partial({ name: true });

/**
 * What an account may give its own server: its address over HTTP (never a program to start), the static headers it
 * is called with (sealed like the operator's), and whether it is on. Price, limits, logging and visibility stay the
 * operator's to set.
 */
export const accountCreateSchema = z.object({
  name: serverName,
  url: serverUrl,
  transport: z.enum(['streamable-http', 'sse']).optional(),
  headers: headers.optional(),
  enabled: z.boolean().optional(),
}).strict();
export const accountPatchSchema = accountCreateSchema.partial();

/** Tool rules as given, over `base` (what they leave out stays as it was). */
export function toolRulesOf(input: z.infer<typeof toolRulesInput>, base: McpToolRules): McpToolRules {
  return { default: input.default ?? base.default, tools: input.tools ?? base.tools };
}

/** OAuth client credentials as given, as the repository stores them (the secret sealed there). */
export function oauthOf(input: z.infer<typeof oauthInput>): McpOAuthInput {
  return {
    settings: {
      tokenUrl: input.token_url,
      clientId: input.client_id,
      scope: input.scope ?? null,
      audience: input.audience ?? null,
      authMethod: (input.auth_method ?? 'client_secret_basic') as McpOAuthInput['settings']['authMethod'],
    },
    clientSecret: input.client_secret,
  };
}
