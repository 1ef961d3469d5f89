import { z } from 'zod';
import { isoTime } from './common.js';

export const keyStatus = z.enum(['enabled', 'disabled', 'revoked', 'expired', 'paused']);
export const budgetPeriod = z.enum(['day', 'week', 'month']);

/** What a key may spend in each UTC day, week (from Monday) or month; `spent_usd` is this period's. */
export const keyBudget = z.strictObject({ period: budgetPeriod, limit_usd: z.number(), spent_usd: z.number(), resets_at: isoTime });

/** The one JSON view of a key (the admin API's and the console's). */
export const apiKey = z.strictObject({
  id: z.string(),
  object: z.literal('api_key'),
  account_id: z.string(),
  name: z.string(),
  hint: z.string(),
  status: keyStatus,
  quota_usd: z.number().nullable(),
  spent_usd: z.number(),
  /** Money held for requests in flight against the key's quota or budget. */
  held_usd: z.number(),
  budget: keyBudget.nullable(),
  allowed_models: z.array(z.string()).nullable(),
  ip_allowlist: z.array(z.string()).nullable(),
  allowed_origins: z.array(z.string()).nullable(),
  /** Present exactly when `allowed_origins` is set: why a key usable from browsers is a risk. */
  allowed_origins_warning: z.string().optional(),
  /** MCP server names the key may use; null: every public server. */
  allowed_mcp_servers: z.array(z.string()).nullable(),
  expires_at: isoTime.nullable(),
  rpm: z.number().nullable(),
  tpm: z.number().nullable(),
  concurrency: z.number().nullable(),
  environment: z.string().nullable(),
  /** The key's project; null: the account's default project. */
  project_id: z.string().nullable(),
  /** Guardrail policy names bound to the key (the console's key views and the admin API's single-key answers). */
  guardrails: z.array(z.string()).optional(),
  created_by: z.string().nullable(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type ApiKeyJson = z.infer<typeof apiKey>;

/** GET /api/keys. */
export const keyList = z.strictObject({ data: z.array(apiKey) });
export type KeyListJson = z.infer<typeof keyList>;
/** GET, PATCH /api/keys/:id and POST …/revoke. */
export const keyAnswer = z.strictObject({ key: apiKey });
export type KeyAnswerJson = z.infer<typeof keyAnswer>;
/** POST /api/keys: the secret is shown this once. */
export const createdKey = z.strictObject({ key: apiKey, secret: z.string() });
export type CreatedKeyJson = z.infer<typeof createdKey>;

/** GET /api/guardrails: the guardrail policies the operator lets accounts attach to their keys. */
export const offeredGuardrail = z.strictObject({ name: z.string(), kind: z.string(), mode: z.string(), applies_to: z.string() });
export type OfferedGuardrailJson = z.infer<typeof offeredGuardrail>;
export const offeredGuardrailList = z.strictObject({ data: z.array(offeredGuardrail) });
export type OfferedGuardrailListJson = z.infer<typeof offeredGuardrailList>;

/** GET /api/mcp-servers: the MCP servers the account's keys may name in `allowed_mcp_servers`. */
export const offeredMcpServer = z.strictObject({ name: z.string() });
export type OfferedMcpServerJson = z.infer<typeof offeredMcpServer>;
export const offeredMcpServerList = z.strictObject({ data: z.array(offeredMcpServer) });
export type OfferedMcpServerListJson = z.infer<typeof offeredMcpServerList>;

/** GET /api/mcp-servers/own, POST /api/mcp-servers, PATCH /api/mcp-servers/:id: a server the account registered. */
export const accountMcpServer = z.strictObject({
  object: z.literal('mcp_server'),
  id: z.string(),
  name: z.string(),
  url: z.string(),
  transport: z.enum(['streamable-http', 'sse']),
  header_names: z.array(z.string()),
  enabled: z.boolean(),
  price_per_call: z.string().nullable(),
  health: z.strictObject({
    status: z.enum(['healthy', 'unhealthy']),
    error: z.string().nullable(),
    checked_at: isoTime,
    latency_ms: z.number().nullable(),
    tool_count: z.number(),
    tools: z.array(z.strictObject({ name: z.string(), description: z.string().nullable(), read_only: z.boolean() })),
  }).nullable(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type AccountMcpServerJson = z.infer<typeof accountMcpServer>;
/** GET /api/mcp-servers/own; `account_servers_allowed`: whether the operator lets accounts register and change servers. */
export const accountMcpServerList = z.strictObject({ object: z.literal('list'), data: z.array(accountMcpServer), account_servers_allowed: z.boolean() });
export type AccountMcpServerListJson = z.infer<typeof accountMcpServerList>;
