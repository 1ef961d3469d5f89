import { nanoToUsd } from '../../billing/money.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { isoTime } from '../../management/time-input.js';
import type { RecentCall } from '../../storage/repositories/operator-repository.js';
import type { ConsoleDeps } from '../console-deps.js';
import { channelStatus } from '../../http/channel-status.js';
import type { GatewayServices } from '../../services.js';
import { LiveTraffic, type LiveSummary } from './live-traffic.js';
import { consoleRoutes } from '../console-route-table.js';
import type { ChannelHealthRowJson, LiveTrafficJson, OperatorOverviewJson, TrafficSummaryJson } from '../../contract/channels.js';

const MINUTE = 60_000;
/** The windows the overview offers, and the width of one point of their charts. */
const WINDOWS: Readonly<Record<OperatorOverviewJson['window'], { spanMs: number; bucketMs: number }>> = {
  '1h': { spanMs: 60 * MINUTE, bucketMs: MINUTE },
  '24h': { spanMs: 24 * 60 * MINUTE, bucketMs: 30 * MINUTE },
  '7d': { spanMs: 7 * 24 * 60 * MINUTE, bucketMs: 6 * 60 * MINUTE },
};
/** The overview reads at most this many of the newest calls of its window (the answer says when it was cut). */
const MAX_CALLS = 200_000;

interface Tally {
  requests: number;
  errors: number;
  costNano: bigint;
  latencies: number[];
}

function tally(): Tally {
  return { requests: 0, errors: 0, costNano: 0n, latencies: [] };
}

function add(into: Tally, call: RecentCall): void {
  into.requests += 1;
  if (call.status >= 400) into.errors += 1;
  into.costNano += call.costNano;
  into.latencies.push(call.latencyMs);
}

/** The nearest-rank percentile of sorted values. */
function percentile(sorted: number[], fraction: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] as number;
}

function summary(value: Tally, seconds: number): TrafficSummaryJson {
  const sorted = value.latencies.sort((a, b) => a - b);
  return {
    requests: value.requests,
    requests_per_second: Number((value.requests / seconds).toFixed(4)),
    errors: value.errors,
    error_rate: value.requests === 0 ? 0 : Number((value.errors / value.requests).toFixed(4)),
    latency_p50_ms: percentile(sorted, 0.5),
    latency_p99_ms: percentile(sorted, 0.99),
    spend_usd: nanoToUsd(value.costNano),
  };
}

function grouped(calls: RecentCall[], keyOf: (call: RecentCall) => string | null, seconds: number): (TrafficSummaryJson & { name: string })[] {
  const groups = new Map<string, Tally>();
  for (const call of calls) {
    const key = keyOf(call) ?? '(none)';
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = tally()));
    add(group, call);
  }
  return [...groups].sort((a, b) => b[1].requests - a[1].requests).map(([name, value]) => ({ name, ...summary(value, seconds) }));
}

function liveJson(live: LiveSummary): LiveTrafficJson {
  return {
    since: isoTime(live.since),
    window_seconds: Math.round(live.seconds),
    requests: live.requests,
    requests_per_second: Number(live.requestsPerSecond.toFixed(4)),
    errors: live.errors,
    error_rate: Number(live.errorRate.toFixed(4)),
    latency_p50_ms: live.latencyP50Ms,
    latency_p99_ms: live.latencyP99Ms,
    in_flight: live.inFlight,
  };
}

/** Each channel's health as routing sees it now: status, breaker state and the breaker window's outcomes. */
function channelHealthRows(services: GatewayServices): ChannelHealthRowJson[] {
  const windowSeconds = Math.round(services.config.routing.breakerWindowMs / 1000);
  return services.catalog.channels().map((channel) => {
    const breaker = services.health.report(channel).channel;
    const attempts = breaker.recent.successes + breaker.recent.failures;
    return {
      channel_id: channel.id, name: channel.name, status: channelStatus(services, channel), breaker_state: breaker.state,
      recent: { window_seconds: windowSeconds, successes: breaker.recent.successes, failures: breaker.recent.failures },
      error_rate: attempts === 0 ? null : Number((breaker.recent.failures / attempts).toFixed(4)),
      last_error: breaker.lastFailureClass === null || breaker.lastFailureAt === null ? null : { class: breaker.lastFailureClass, at: isoTime(breaker.lastFailureAt) },
    };
  });
}

/**
 * What an operator sees at a glance: traffic, errors, latency and spend over a window, per model and channel, from
 * the usage log; and what is live now — requests/s, error rate and latency from this process's metrics registry,
 * each channel's health from routing's breakers.
 */
export const OVERVIEW_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock } = deps.services;
  const live = new LiveTraffic(deps.services.metrics, clock.now());
  return { deps, storage, clock, live };
}, [
  { method: 'GET', path: '/api/operator/overview', who: 'operator', permission: 'read', handler: ({ deps, storage, clock, live }) => async ({ context }) => {
    const windowName = context.query.get('window') ?? '24h';
    if (!Object.hasOwn(WINDOWS, windowName)) throw new GatewayError('bad_request', `'window' must be one of ${Object.keys(WINDOWS).join(', ')}.`, { param: 'window' });
    const window = WINDOWS[windowName as OperatorOverviewJson['window']];
    const now = clock.now();
    const end = Math.ceil((now + 1) / window.bucketMs) * window.bucketMs;
    const from = end - window.spanMs;
    const [calls, owed] = await Promise.all([storage.operators.recentCalls(from, now + 1, MAX_CALLS), storage.operators.balancesOwed()]);
    const seconds = (now - from) / 1000;
    const channelNames = new Map(deps.services.catalog.channels().map((channel) => [channel.id, channel.name]));
    const total = tally();
    const buckets: Tally[] = Array.from({ length: window.spanMs / window.bucketMs }, tally);
    const accounts = new Set<string>();
    for (const call of calls) {
      add(total, call);
      const index = Math.floor((call.at - from) / window.bucketMs);
      const bucket = buckets[index];
      if (bucket !== undefined) add(bucket, call);
      if (call.accountId !== null) accounts.add(call.accountId);
    }
    const overview: OperatorOverviewJson = {
      window: windowName as OperatorOverviewJson['window'],
      from: isoTime(from),
      to: isoTime(now),
      truncated: calls.length >= MAX_CALLS,
      totals: summary(total, seconds),
      active_accounts: accounts.size,
      balances_owed: { accounts: owed.accounts, usd: nanoToUsd(owed.owedNano) },
      series: buckets.map((bucket, index) => ({ at: isoTime(from + index * window.bucketMs), ...summary(bucket, window.bucketMs / 1000) })),
      by_model: grouped(calls, (call) => call.model, seconds),
      // `name` stays the channel's id (what the usage log holds); `channel_name` is what people call it.
      by_channel: grouped(calls, (call) => call.channelId, seconds).map((row) => ({ ...row, channel_name: channelNames.get(row.name) ?? null })),
      live: liveJson(live.read(now)),
      channels: channelHealthRows(deps.services),
    };
    sendJson(context, 200, overview);
  } },
]);
