import { z } from 'zod';
import { isoTime, listPageOf } from './common.js';

/** A channel as the admin API shows it: key hints and masked header values, never a key or a URL's credentials. */
export const channel = z.strictObject({
  id: z.string(),
  object: z.literal('channel'),
  name: z.string(),
  type: z.string(),
  base_url: z.string().nullable(),
  api_key_hints: z.array(z.string()),
  /** Public model name → the upstream's name for it (`''`: the same; `*`: every bundled model of the provider). */
  models: z.record(z.string(), z.string()),
  priority: z.number().int(),
  weight: z.number().int(),
  enabled: z.boolean(),
  headers: z.record(z.string(), z.string()),
  settings: z.record(z.string(), z.unknown()),
  created_at: isoTime,
  updated_at: isoTime,
});
export type ChannelJson = z.infer<typeof channel>;
export const channelPage = listPageOf(channel);
export type ChannelPageJson = z.infer<typeof channelPage>;

/** One setting of a channel type's form. */
export const channelFormField = z.strictObject({
  name: z.string(),
  label: z.string(),
  input: z.enum(['text', 'number', 'boolean', 'select']),
  required: z.boolean(),
  options: z.array(z.string()).nullable(),
  placeholder: z.string().nullable(),
  hint: z.string().nullable(),
});
export type ChannelFormFieldJson = z.infer<typeof channelFormField>;

/** A channel type this build knows, the form its upstream declares and what it can do (GET /admin/channel-types). */
export const channelType = z.strictObject({
  type: z.string(),
  form: z.strictObject({
    credential: z.enum(['key', 'optional-key', 'json']),
    credential_hint: z.string().nullable(),
    base_url: z.enum(['required', 'optional']),
    base_url_hint: z.string().nullable(),
    upstream_model_hint: z.string().nullable(),
    /** The type's own settings, then those every type takes. */
    settings: z.array(channelFormField),
  }),
  protocol: z.string(),
  streaming: z.boolean(),
  embeddings: z.boolean(),
  /** The media operations it serves (images, speech, transcription…). */
  media: z.array(z.string()),
  /** Who counts a request's tokens: the provider's own counter, or the gateway's tokenizer. */
  count_tokens: z.enum(['upstream', 'local']),
});
export type ChannelTypeJson = z.infer<typeof channelType>;
export const channelTypeList = z.strictObject({ object: z.literal('list'), data: z.array(channelType) });
export type ChannelTypeListJson = z.infer<typeof channelTypeList>;

/** What routing says of a channel: serving, serving with trouble, refusing, or turned off. */
export const channelStatus = z.enum(['operational', 'degraded', 'down', 'disabled']);
export const breakerState = z.enum(['closed', 'open', 'half-open']);

/** The upstream failure class and time of a breaker's last failure (null: none yet). */
const lastError = z.strictObject({ class: z.string(), at: isoTime }).nullable();
const recentOutcomes = z.strictObject({ window_seconds: z.number().int(), successes: z.number().int(), failures: z.number().int() });

/** A circuit breaker (a channel's, or one of its models') as this process sees it. */
export const breaker = z.strictObject({
  state: breakerState,
  open_until: isoTime.nullable(),
  open_reason: z.enum(['failures', 'retry-after']).nullable(),
  cooldown_level: z.number().int(),
  consecutive_failures: z.number().int(),
  recent: recentOutcomes,
  last_error: lastError,
  last_success_at: isoTime.nullable(),
});
export type BreakerJson = z.infer<typeof breaker>;

/** A channel's health as the admin sees it: breakers, recent counts, last error, flagged keys; no URL, no key. */
export const channelHealth = z.strictObject({
  object: z.literal('channel.health'),
  channel_id: z.string(),
  name: z.string(),
  type: z.string(),
  enabled: z.boolean(),
  status: channelStatus,
  served_models: z.number().int(),
  breaker,
  /** Each model's own breaker, with the moving average of its time to first byte (null: not measured yet). */
  models: z.array(breaker.extend({ model: z.string(), latency_ms: z.number().nullable() })),
  in_flight: z.number().int(),
  keys: z.number().int(),
  /** Keys the upstream refused, by their index among the channel's keys. */
  rejected_keys: z.array(z.strictObject({ index: z.number().int(), reason: z.string(), flagged_at: isoTime })),
});
export type ChannelHealthJson = z.infer<typeof channelHealth>;

/** GET /admin/health: every channel's health and the gateway's in one word. */
export const gatewayHealth = z.strictObject({
  object: z.literal('health'),
  status: z.enum(['ok', 'degraded', 'down']),
  /** Breaker state is shared between instances (Redis). */
  shared: z.boolean(),
  channels: z.array(channelHealth),
});
export type GatewayHealthJson = z.infer<typeof gatewayHealth>;

/** POST /admin/channels/:id/test: one real request to the upstream, and the channel's health after it. */
export const channelTestResult = z.strictObject({
  object: z.literal('channel.test'),
  channel_id: z.string(),
  ok: z.boolean(),
  outcome: z.string(),
  model: z.string(),
  upstream_model: z.string(),
  latency_ms: z.number(),
  upstream_status: z.number().int().nullable(),
  failure_class: z.string().nullable(),
  message: z.string(),
  health: channelHealth,
});
export type ChannelTestResultJson = z.infer<typeof channelTestResult>;

/** Traffic over a span: counts, rates, latency percentiles (null: no calls) and spend. */
export const trafficSummary = z.strictObject({
  requests: z.number().int(),
  requests_per_second: z.number(),
  errors: z.number().int(),
  error_rate: z.number(),
  latency_p50_ms: z.number().nullable(),
  latency_p99_ms: z.number().nullable(),
  spend_usd: z.number(),
});
export type TrafficSummaryJson = z.infer<typeof trafficSummary>;

/** What this process's metrics say of the last minutes. */
export const liveTraffic = z.strictObject({
  since: isoTime,
  window_seconds: z.number().int(),
  requests: z.number(),
  requests_per_second: z.number(),
  errors: z.number(),
  error_rate: z.number(),
  latency_p50_ms: z.number().nullable(),
  latency_p99_ms: z.number().nullable(),
  in_flight: z.number(),
});
export type LiveTrafficJson = z.infer<typeof liveTraffic>;

/** A channel's health in a line, as the operator overview lists it. */
export const channelHealthRow = z.strictObject({
  channel_id: z.string(),
  name: z.string(),
  status: channelStatus,
  breaker_state: breakerState,
  recent: recentOutcomes,
  /** Failures over the breaker window's outcomes (null: none). */
  error_rate: z.number().nullable(),
  last_error: lastError,
});
export type ChannelHealthRowJson = z.infer<typeof channelHealthRow>;

/** GET /api/operator/overview: a window's traffic from the usage log, and what is live now. */
export const operatorOverview = z.strictObject({
  window: z.enum(['1h', '24h', '7d']),
  from: isoTime,
  to: isoTime,
  /** The window held more calls than the overview reads: the figures are of the newest ones. */
  truncated: z.boolean(),
  totals: trafficSummary,
  active_accounts: z.number().int(),
  balances_owed: z.strictObject({ accounts: z.number().int(), usd: z.number() }),
  series: z.array(trafficSummary.extend({ at: isoTime })),
  /** `(none)` for calls refused before a model was known. */
  by_model: z.array(trafficSummary.extend({ name: z.string() })),
  /** `name` is the channel's id (what the usage log holds), `channel_name` what people call it (null: gone). */
  by_channel: z.array(trafficSummary.extend({ name: z.string(), channel_name: z.string().nullable() })),
  live: liveTraffic,
  channels: z.array(channelHealthRow),
});
export type OperatorOverviewJson = z.infer<typeof operatorOverview>;
