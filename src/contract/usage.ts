import { z } from 'zod';
import { isoTime, listPageOf } from './common.js';

/** A usage-log row as the admin API and the console show it (metadata only). */
export const usageRow = z.strictObject({
  request_id: z.string(),
  /** Null for requests refused before their key was known. */
  account_id: z.string().nullable(),
  key_id: z.string().nullable(),
  model: z.string().nullable(),
  channel_id: z.string().nullable(),
  protocol: z.string(),
  endpoint: z.string(),
  stream: z.boolean(),
  status: z.number(),
  error_code: z.string().nullable(),
  prompt_tokens: z.number().nullable(),
  completion_tokens: z.number().nullable(),
  cached_tokens: z.number().nullable(),
  reasoning_tokens: z.number().nullable(),
  total_tokens: z.number().nullable(),
  cost_usd: z.number(),
  latency_ms: z.number().nullable(),
  ttfb_ms: z.number().nullable(),
  attempts: z.number(),
  attempted_channels: z.array(z.string()),
  /** Answered from the response cache (no upstream call; billed at the model's hit price). */
  cache_hit: z.boolean(),
  /** Calls of tools the upstream runs and bills per call, and their cost (part of cost_usd). */
  web_searches: z.number(),
  web_fetches: z.number(),
  file_searches: z.number(),
  hosted_tool_cost_usd: z.number(),
  /** The end customer the request named (null: none). */
  customer: z.string().nullable(),
  /** The request's tags, `name: value` (empty: none). */
  tags: z.record(z.string(), z.string()),
  /** What the request's guardrail policies did: name, direction, outcome and count each (empty: none ran). Never text. */
  guardrails: z.array(z.strictObject({
    name: z.string(),
    direction: z.enum(['input', 'output']),
    outcome: z.enum(['passed', 'logged', 'masked', 'blocked', 'unavailable']),
    count: z.number(),
  })),
  /** An MCP tool call's server, tool and bytes (null: not one); its payload only where the server logs payloads. */
  mcp: z.strictObject({
    server: z.string(),
    tool: z.string(),
    bytes_in: z.number(),
    bytes_out: z.number(),
    payload: z.string().optional(),
  }).nullable(),
  created_at: isoTime,
});
export type UsageRowJson = z.infer<typeof usageRow>;

/** A row of the console's usage list: the key's name beside its id (`Playground` for the playground's keys; null when the key is gone). */
export const consoleUsageRow = usageRow.extend({ key_name: z.string().nullable() });
export type ConsoleUsageRowJson = z.infer<typeof consoleUsageRow>;
/** GET /api/usage. */
export const usagePage = listPageOf(consoleUsageRow);
export type UsagePageJson = z.infer<typeof usagePage>;

/** One day, model and key of GET /api/usage/daily. */
export const dailyUsage = z.strictObject({
  date: z.string(),
  /** Null for requests refused before a model was known. */
  model: z.string().nullable(),
  key_id: z.string().nullable(),
  /** `Playground` for the playground's own keys; null when the key is gone. */
  key_name: z.string().nullable(),
  requests: z.number(),
  errors: z.number(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  cost_usd: z.number(),
});
export type DailyUsageJson = z.infer<typeof dailyUsage>;
export const dailyUsageList = z.strictObject({ data: z.array(dailyUsage) });
export type DailyUsageListJson = z.infer<typeof dailyUsageList>;

/** An active subscription as the overview shows it: what its plan's quota has left this period. */
export const overviewSubscription = z.strictObject({
  id: z.string(),
  plan: z.string(),
  period_end: isoTime,
  quota_usd: z.number(),
  used_usd: z.number(),
  remaining_usd: z.number(),
});
/** GET /api/overview: the balance, active subscriptions and today's spend (a project-scoped member: their projects'). */
export const overview = z.strictObject({
  balance_usd: z.number(),
  subscriptions: z.array(overviewSubscription),
  spend_today_usd: z.number(),
  requests_today: z.number(),
});
export type OverviewJson = z.infer<typeof overview>;

/** A row of the operator's usage explorer (GET /api/operator/usage): the account's email and the channel's name as well (null: gone). */
export const operatorUsageRow = consoleUsageRow.extend({ account_email: z.string().nullable(), channel_name: z.string().nullable() });
export type OperatorUsageRowJson = z.infer<typeof operatorUsageRow>;
export const operatorUsagePage = listPageOf(operatorUsageRow);
export type OperatorUsagePageJson = z.infer<typeof operatorUsagePage>;
