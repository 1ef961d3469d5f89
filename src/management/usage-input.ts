import { nanoToUsd } from '../billing/money.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { UsageLogRow, UsageQuery } from '../domain/usage-records.js';
import { isoTime, timeInput } from './time-input.js';
import type { UsageRowJson } from '../contract/usage.js';

/** A usage-log row as the admin API and the console show it (metadata only). */
export function usageRowToJson(row: UsageLogRow): UsageRowJson {
  return {
    request_id: row.requestId,
    account_id: row.accountId,
    key_id: row.keyId,
    model: row.model,
    channel_id: row.channelId,
    protocol: row.protocol,
    endpoint: row.endpoint,
    stream: row.stream,
    status: row.status,
    error_code: row.errorCode,
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    cached_tokens: row.cachedTokens,
    reasoning_tokens: row.reasoningTokens,
    total_tokens: row.totalTokens,
    cost_usd: nanoToUsd(row.costNano),
    latency_ms: row.latencyMs,
    ttfb_ms: row.ttfbMs,
    attempts: row.attempts,
    attempted_channels: row.attemptedChannels ?? [],
    cache_hit: row.cacheHit === true,
    web_searches: row.hostedTools?.webSearch ?? 0,
    web_fetches: row.hostedTools?.webFetch ?? 0,
    file_searches: row.hostedTools?.fileSearch ?? 0,
    hosted_tool_cost_usd: nanoToUsd(row.hostedToolCostNano ?? 0n),
    customer: row.customer ?? null,
    tags: row.tags ?? {},
    guardrails: (row.guardrails ?? []).map((hit) => ({ name: hit.name, direction: hit.direction, outcome: hit.outcome, count: hit.count })),
    mcp: row.mcp === undefined ? null : {
      server: row.mcp.server,
      tool: row.mcp.tool,
      bytes_in: row.mcp.bytesIn,
      bytes_out: row.mcp.bytesOut,
      ...(row.mcp.payload === undefined ? {} : { payload: row.mcp.payload }),
    },
    created_at: isoTime(row.createdAt),
  };
}

/** The filters of a usage query string (`account_id`, `key_id`, `model`, `customer`, `session_id`, `status`, `from`, `to`). */
export function usageQueryFrom(query: URLSearchParams): UsageQuery {
  const filter: UsageQuery = {};
  const text = (name: string): string | undefined => query.get(name) ?? undefined;
  const time = (name: string): number | undefined => {
    const raw = query.get(name);
    if (raw === null) return undefined;
    const parsed = timeInput.safeParse(/^\d+$/.test(raw) ? Number(raw) : raw);
    if (!parsed.success) throw new GatewayError('bad_request', `'${name}' must be an ISO 8601 time or Unix seconds.`, { param: name });
    return parsed.data;
  };
  const accountId = text('account_id');
  const keyId = text('key_id');
  const model = text('model');
  const from = time('from');
  const to = time('to');
  if (accountId !== undefined) filter.accountId = accountId;
  if (keyId !== undefined) filter.keyId = keyId;
  if (model !== undefined) filter.model = model;
  const customer = text('customer');
  if (customer !== undefined) filter.customer = customer;
  const sessionId = text('session_id');
  if (sessionId !== undefined) filter.sessionId = sessionId;
  if (from !== undefined) filter.from = from;
  if (to !== undefined) filter.to = to;
  const status = query.get('status');
  if (status !== null) {
    const code = Number(status);
    if (!Number.isInteger(code) || code < 100 || code > 599) throw new GatewayError('bad_request', "'status' must be an HTTP status code.", { param: 'status' });
    filter.status = code;
  }
  return filter;
}
