import type { BreakerState } from '../routing/circuit-breaker.js';
import type { SqliteWriter } from '../storage/dialects.js';
import { observeEventLoopDelay } from './event-loop-delay.js';
import { observeGarbageCollection } from './garbage-collection.js';
import { MetricsRegistry, type Counter, type CounterSeries, type Gauge, type GaugeSeries, type Histogram } from './metrics-registry.js';

/** Seconds, 5 ms to 120 s: fast proxied answers at the bottom, long generations at the top. */
export const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120] as const;

/** Seconds, 1 ms to 10 s: fine at the bottom, where a refusal and a fast admitted answer are judged. */
export const ADMISSION_LATENCY_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** Seconds, 0.25 ms to 250 ms: how long one synchronous SQLite write transaction held the event loop. */
export const SQLITE_WRITE_BUCKETS_SECONDS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25] as const;

const BREAKER_STATE_VALUE: Record<BreakerState, number> = { closed: 0, 'half-open': 1, open: 2 };

/** What one upstream attempt came to, for `upstream_attempts_total`. */
export type AttemptOutcome = 'success' | 'failure' | 'refused' | 'aborted' | 'error';

/**
 * The gateway's metrics (docs/operators.md, "Metrics"). Names carry the `unigate_` prefix; label sets are small
 * and bounded (protocol and endpoint come from a fixed list, channel is the channel's name).
 */
export class GatewayMetrics {
  readonly registry = new MetricsRegistry();
  readonly requests: Counter;
  readonly requestDuration: Histogram;
  readonly timeToFirstByte: Histogram;
  /** API answers by admission outcome: `refused` (503) or `admitted` (every other status). */
  readonly admissionLatency: Histogram;
  readonly upstreamAttempts: Counter;
  readonly retries: CounterSeries;
  readonly upstreamErrors: Counter;
  readonly inFlight: GaugeSeries;
  readonly #inFlightGauge: Gauge;
  /** Requests refused 503 `overloaded` by admission control. */
  readonly shed: CounterSeries;
  /** Lockouts started after too many wrong credentials from one address, by surface (`api-key`, `admin-token`). */
  readonly authLockouts: Counter;
  /** Requests a running lockout refused, by surface. */
  readonly authLockoutRefusals: Counter;
  readonly #sqliteWriteSeconds: Histogram;
  readonly #sqliteWriteRows: Counter;
  /** Stops the event-loop delay sampling and the garbage-collection observer. */
  readonly stop: () => void;

  constructor(breakerStates: () => Iterable<{ channel: string; model: string; state: BreakerState }> = () => []) {
    const registry = this.registry;
    this.requests = registry.counter('unigate_requests_total', 'Requests answered on the API listener, by protocol family, endpoint and HTTP status.', ['protocol', 'endpoint', 'status']);
    this.requestDuration = registry.histogram('unigate_request_duration_seconds', 'Time from request arrival to the end of the response (streams: the last byte).', ['protocol', 'endpoint'], LATENCY_BUCKETS_SECONDS);
    this.admissionLatency = registry.histogram('unigate_admission_latency_seconds', 'Time from request arrival to the end of the response on the API listener, by outcome: refused (503: overloaded, or no capacity) or admitted (every other status).', ['outcome'], ADMISSION_LATENCY_BUCKETS_SECONDS);
    this.timeToFirstByte = registry.histogram('unigate_time_to_first_byte_seconds', 'Time from request arrival to the first byte of a relayed model answer.', ['protocol', 'stream'], LATENCY_BUCKETS_SECONDS);
    this.upstreamAttempts = registry.counter('unigate_upstream_attempts_total', 'Upstream attempts by channel and outcome (success, failure, refused: the caller\'s error, aborted: the caller left).', ['channel', 'outcome']);
    this.retries = registry.counter('unigate_retries_total', 'Attempts beyond the first of a request (failover to the next channel).').labels();
    this.upstreamErrors = registry.counter('unigate_upstream_errors_total', 'Failed upstream attempts by channel and failure class.', ['channel', 'class']);
    this.#inFlightGauge = registry.gauge('unigate_in_flight_requests', 'Requests on the API listener whose response has not finished.');
    this.inFlight = this.#inFlightGauge.labels();
    this.shed = registry.counter('unigate_shed_requests_total', 'Requests refused 503 overloaded: the process was at its in-flight bound, or admitting only a share of arrivals.').labels();
    this.authLockouts = registry.counter('unigate_auth_lockouts_total', 'Lockouts started: an IP address sent AUTH_FAILURE_LIMIT wrong credentials within the window, by surface (api-key, admin-token). With Redis each lockout is counted once, by the instance that saw the failure reaching the limit.', ['surface']);
    this.authLockoutRefusals = registry.counter('unigate_auth_lockout_refusals_total', 'Requests refused 429 too_many_failed_attempts by a running lockout, by surface.', ['surface']);
    this.#sqliteWriteSeconds = registry.histogram('unigate_sqlite_write_seconds', 'How long one batched SQLite write transaction held the event loop, by writer (usage, money, checkpoints).', ['writer'], SQLITE_WRITE_BUCKETS_SECONDS);
    this.#sqliteWriteRows = registry.counter('unigate_sqlite_write_rows_total', 'Rows written by the batched SQLite write transactions, by writer.', ['writer']);
    const stopDelay = observeEventLoopDelay(registry);
    const stopGc = observeGarbageCollection(registry);
    this.stop = () => {
      stopDelay();
      stopGc();
    };
    registry.collected('unigate_breaker_state', 'Circuit breaker state: 0 closed, 1 half-open, 2 open; model="" is the channel\'s own breaker.', ['channel', 'model'], function* () {
      for (const { channel, model, state } of breakerStates()) yield { labels: [channel, model], value: BREAKER_STATE_VALUE[state] };
    });
  }

  /** One synchronous SQLite write transaction of `writer` held the event loop `seconds` and wrote `rows`. */
  readonly observeSqliteWrite = (writer: SqliteWriter, seconds: number, rows: number): void => {
    this.#sqliteWriteSeconds.labels(writer).observe(seconds);
    this.#sqliteWriteRows.labels(writer).inc(rows);
  };

  /** `unigate_admission_limit` (the in-flight bound of admission control) and `unigate_admission_share` (the share admitted now). */
  followAdmission(admission: { readonly limit: number; readonly share: number }): void {
    this.registry.collected('unigate_admission_limit', 'Requests this process serves at once before it sheds.', [], function* () {
      yield { labels: [], value: admission.limit };
    });
    this.registry.collected('unigate_admission_share', 'Share of arriving requests this process admits now: 1, or less while it is overloaded.', [], function* () {
      yield { labels: [], value: admission.share };
    });
  }

  /**
   * `unigate_limits_degraded` (1 while Redis is configured but unreachable and the limits run in the degraded
   * mode) and `unigate_fleet_instances` (live instances as last seen in Redis, what a limit is divided by then).
   */
  observeSharedLimits(state: () => { mode: 'redis' | 'degraded' | 'memory'; fleet: { size: number } }): void {
    this.registry.collected('unigate_limits_degraded', 'Whether the limits are degraded: 1 while Redis is configured but unreachable, else 0.', [], function* () {
      yield { labels: [], value: state().mode === 'degraded' ? 1 : 0 };
    });
    this.registry.collected('unigate_fleet_instances', 'Live gateway instances as last seen in Redis (1 without Redis).', [], function* () {
      yield { labels: [], value: state().fleet.size };
    });
  }

  /**
   * `unigate_outbox_pending{kind}`: what waits on local disk for the database — `settlements` (charges not yet
   * committed) and `usage_rows` (usage-log rows not yet written). Zero while the database takes everything.
   */
  observeOutbox(depth: () => { settlements: number; usageRows: number }): void {
    this.registry.collected('unigate_outbox_pending', 'Settlements and usage rows kept on local disk until the database takes them.', ['kind'], function* () {
      const current = depth();
      yield { labels: ['settlements'], value: current.settlements };
      yield { labels: ['usage_rows'], value: current.usageRows };
    });
  }

  render(): string {
    return this.registry.render();
  }
}
