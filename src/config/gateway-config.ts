import type { BatchConfig } from './batch-config.js';
import type { TelemetryConfig } from './telemetry-config.js';
import type { RedisDegradedMode } from '../limits/redis-rate-limiter.js';
import type { LogLevel } from '../shared/logger.js';
import type { CommerceConfig } from './commerce-config.js';
import type { WebhookConfig } from './webhook-config.js';

/** The MCP gateway's outbound connections. */
export interface McpConfig {
  /**
   * Upstream MCP servers may be on private, loopback and link-local addresses (MCP_ALLOW_PRIVATE_ADDRESSES; off by
   * default): checked when a server is registered and again for every address a connection resolves.
   */
  allowPrivateAddresses: boolean;
  /** Time between two health checks of the enabled servers (MCP_HEALTH_CHECK_INTERVAL_SECONDS; 0 turns them off). */
  healthCheckIntervalMs: number;
  /** How long one server's check (connect and list its tools) may take before it counts as down (MCP_HEALTH_CHECK_TIMEOUT_SECONDS). */
  healthCheckTimeoutMs: number;
  /**
   * The operator may register local stdio servers, which the gateway starts as processes of its own (MCP_ALLOW_STDIO;
   * off by default): when off, none is registered, started or called.
   */
  allowStdio: boolean;
  /**
   * An account's owner or admin may register Streamable HTTP and SSE servers for the account's own keys from the console
   * (MCP_ALLOW_ACCOUNT_SERVERS; off by default): when off, none is registered and the ones kept are not served. Such
   * servers are never on private addresses, whatever MCP_ALLOW_PRIVATE_ADDRESSES says.
   */
  allowAccountServers: boolean;
}
import type { SsoConfig } from './sso-config.js';
import type { RealtimeConfig } from './realtime-config.js';

export interface ProviderShortcut {
  apiKey: string;
  baseUrl: string | null;
}

/** How the caller's IP is found when the gateway sits behind proxies. */
export type TrustProxy =
  | { mode: 'none' }
  /** Trust every hop: the left-most X-Forwarded-For address is the caller. */
  | { mode: 'all' }
  /** Trust only these proxy addresses/ranges: walk X-Forwarded-For from the right, skipping trusted hops. */
  | { mode: 'list'; ranges: string[] };

/** Failover and circuit breaking (docs/operators.md, "Routing and failover"). */
export interface RoutingConfig {
  /** Channels tried per request at most (ROUTING_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** No new attempt starts this long after the request arrived; a retry waits no longer than what is left (RETRY_BUDGET_MS). */
  retryBudgetMs: number;
  /** A breaker opens after this many failures in a row (BREAKER_FAILURE_THRESHOLD)… */
  breakerFailureThreshold: number;
  /** …or at this failure share in percent (BREAKER_FAILURE_RATE)… */
  breakerFailureRatePercent: number;
  /** …over at least this many outcomes (BREAKER_MIN_REQUESTS)… */
  breakerMinimumRequests: number;
  /** …within this window (BREAKER_WINDOW_MS). */
  breakerWindowMs: number;
  /** First cooldown of an open breaker, doubled after each failed probe (BREAKER_COOLDOWN_MS)… */
  breakerCooldownMs: number;
  /** …up to this (BREAKER_MAX_COOLDOWN_MS). */
  breakerMaxCooldownMs: number;
  /** A channel no attempt touched for this long gets a 1-token background probe (HEALTH_PROBE_INTERVAL_SECONDS); 0: no probes. */
  probeIntervalMs: number;
  /** Probes running at once at most (HEALTH_PROBE_CONCURRENCY). */
  probeConcurrency: number;
}

/** Deadlines and caps of the API listener against slow or abusive clients (docs/operators.md, "Input limits"). */
export interface ListenerLimits {
  /** All request headers must arrive within this (HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (REQUEST_TIMEOUT_MS); 0 disables. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs: number;
  /** Open connections one client IP address may hold (MAX_CONNECTIONS_PER_IP); 0 disables. */
  maxConnectionsPerIp: number;
  /** Total size of the request line and headers (MAX_HEADER_BYTES). */
  maxHeaderBytes: number;
  /** Number of request headers (MAX_HEADERS_COUNT). */
  maxHeadersCount: number;
  /** Connections the kernel queues before the process accepts them (LISTEN_BACKLOG), per listening socket. */
  listenBacklog: number;
  /** Listening sockets that accept the API listener's connections (ACCEPT_SOCKETS; Linux, SO_REUSEPORT): each accepts one per turn of the loop. */
  acceptSockets: number;
  /** Requests one process serves at once before it sheds (ADMISSION_MAX_IN_FLIGHT); 0: never sheds. */
  admissionMaxInFlight: number;
  /** Median event-loop delay which, held for two intervals in a row, lowers the admitted share (ADMISSION_QUEUE_TARGET_MS); 0: all admitted up to the bound. */
  admissionQueueTargetMs: number;
}

/** Failed-credential limits per client IP address (docs/operators.md, "Input limits"). */
export interface AuthFailureLimits {
  /** Failed API keys or admin tokens an IP address may send per window before it is refused (AUTH_FAILURE_LIMIT). */
  limit: number;
  /** The window (AUTH_FAILURE_WINDOW_SECONDS). */
  windowSeconds: number;
}

export interface GatewayConfig {
  host: string;
  port: number;
  consolePort: number;
  /**
   * The console's public origin (CONSOLE_URL), e.g. `https://console.example.com`: the links in its mails, the
   * Origin it accepts, and `Secure` cookies when https. null: the console listener's own address.
   */
  consoleUrl: string | null;
  /** The API's public base address shown to console users (API_PUBLIC_URL); null: the API listener's own address. */
  apiPublicUrl: string | null;
  /** Whether visitors may create accounts in the console (CONSOLE_SIGN_UP, default true). */
  consoleSignUp: boolean;
  databaseUrl: string;
  redisUrl: string | null;
  /** Prefix of every Redis key and of the invalidation channel (REDIS_KEY_PREFIX), so deployments can share a Redis. */
  redisKeyPrefix: string;
  /** With Redis: a response-cache lookup slower than this is answered as a miss (RESPONSE_CACHE_LOOKUP_TIMEOUT_MS). */
  responseCacheLookupTimeoutMs: number;
  /** How long a concurrency slot outlives a crashed holder on Redis (CONCURRENCY_LEASE_SECONDS); renewed while held. */
  concurrencyLeaseSeconds: number;
  /**
   * While Redis is unreachable (REDIS_DEGRADED_MODE): `share`, each instance enforces its share of every limit (the
   * limit divided by the live instances last seen); `deny`, limited requests answer 503 with Retry-After.
   */
  redisDegradedMode: RedisDegradedMode;
  adminToken: string | null;
  configFile: string | null;
  /** Outgoing mail server (SMTP_URL: smtp://user:pass@host:port or smtps://…); null: mails are written to the log. */
  smtpUrl: string | null;
  /** Sender of every mail (MAIL_FROM), e.g. `Gateway <alerts@example.com>`. */
  mailFrom: string;
  /** How often the alert checker looks for balances and quotas past their thresholds (ALERT_CHECK_SECONDS). */
  alertCheckSeconds: number;
  workers: number;
  /** Which worker of a `WORKERS>1` cluster this process is (set by the primary; 0 otherwise). */
  workerIndex: number;
  /** Stable id of this instance for its money holds (INSTANCE_ID); null: derived from host name, port and worker. */
  instanceId: string | null;
  /** The commit this deployment runs (SOURCE_COMMIT or GIT_COMMIT), reported by /api/status; null: what the build recorded. */
  sourceCommit: string | null;
  /** An instance silent this long is gone and any other releases its money holds (INSTANCE_STALE_SECONDS). */
  instanceStaleSeconds: number;
  /**
   * Settlements and usage rows wait at most this long (or until 500 wait) to be written together in one batch
   * (WRITE_BATCH_MS): the longer, the fewer database statements per request, and the more a crash leaves unbilled.
   */
  writeBatchMs: number;
  dataDirectory: string;
  /** Key for encrypting upstream credentials at rest; when null one is generated under the data directory. */
  secretKey: string | null;
  trustProxy: TrustProxy;
  maxBodyBytes: number;
  listener: ListenerLimits;
  authFailures: AuthFailureLimits;
  /** Apply pending migrations at start (MIGRATE_ON_START); when false, `unigate migrate` must have run. */
  migrateOnStart: boolean;
  /** After SIGTERM, /readyz answers 503 this long before the listeners stop accepting (DRAIN_SECONDS). */
  drainSeconds: number;
  /** Quiet time after load before one full GC hands the freed heap back to the OS (MEMORY_RELIEF_IDLE_SECONDS; 0 = never). */
  memoryReliefIdleSeconds: number;
  /** Brand of the `<brand>_sk_live_` key form. */
  keyBrand: string;
  publicRateLimitPerMinute: number;
  fxSourceUrl: string | null;
  fxRefreshSeconds: number;
  logLevel: LogLevel;
  /** The per-request access log (ACCESS_LOG) and OpenTelemetry export (OTEL_*; docs/operators.md, "Observability"). */
  telemetry: TelemetryConfig;
  /** Routing and failover knobs (docs/operators.md, "Routing and failover"). */
  routing: RoutingConfig;
  /** A second listener serving only GET /metrics, without auth, on HOST (METRICS_PORT); null: none. */
  metricsPort: number | null;
  /** Usage-log rows older than this many days are deleted in the background (USAGE_RETENTION_DAYS); null keeps them. */
  usageRetentionDays: number | null;
  /** Card top-ups (Stripe), invoices, referral rewards and support mail (docs/operators.md, "Payments, invoices, referrals, support"). */
  commerce: CommerceConfig;
  /** The MCP gateway's outbound connections (docs/operators.md, "MCP gateway"). */
  mcp: McpConfig;
  /** Outgoing signed webhooks: delivery pace, timeouts and which addresses they may reach (docs/operators.md, "Webhooks"). */
  webhooks: WebhookConfig;
  /** File uploads and the batch queue: sizes, quota, how many lines each instance runs (docs/operators.md, "Files and batches"). */
  batches: BatchConfig;
  /** Realtime WebSocket sessions: idle and maximum durations, message size, pings, buffering (docs/operators.md, "Realtime sessions"). */
  realtime: RealtimeConfig;
  /** Single sign-on: the operators' OpenID Connect client (OIDC_*) and which provider addresses are reached (docs/single-sign-on.md). */
  sso: SsoConfig;
  providers: {
    openai: ProviderShortcut | null;
    anthropic: ProviderShortcut | null;
    gemini: ProviderShortcut | null;
  };
}
