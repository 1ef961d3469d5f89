import { readBatchConfig } from './batch-config.js';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import type { RedisDegradedMode } from '../limits/redis-rate-limiter.js';
import type { LogLevel } from '../shared/logger.js';
import { hasUrlCredentials } from '../shared/url-credentials.js';
import { HOLDER_PREFIX } from '../domain/batches.js';
import { readCommerceConfig } from './commerce-config.js';
import { readTelemetryConfig } from './telemetry-config.js';
import { readWebhookConfig } from './webhook-config.js';
import { readSsoConfig } from './sso-config.js';
import { readRealtimeConfig } from './realtime-config.js';
import { SettingError, type ReadSetting } from './settings.js';
import { MEMORY_ALLOCATOR_SETTING, readMemoryAllocator } from './memory-allocator.js';
import type { AuthFailureLimits, GatewayConfig, ListenerLimits, ProviderShortcut, RoutingConfig, TrustProxy } from './gateway-config.js';

export const PRODUCT_ENV_PREFIX = 'UNIGATE_';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Environment = Record<string, string | undefined>;

/** The instance's id, which may not look like a batch's hold (`batch:…`): holds under such ids outlive their instance. */
function readInstanceId(env: Environment): string | null {
  const id = read(env, 'INSTANCE_ID') ?? null;
  if (id !== null && id.startsWith(HOLDER_PREFIX)) throw new ConfigError(`INSTANCE_ID may not start with "${HOLDER_PREFIX}" (the ledger keeps batches' holds under such ids)`);
  return id;
}

/** Reads `UNIGATE_<NAME>` first, then `<NAME>`; empty strings count as unset. */
function read(env: Environment, name: string): string | undefined {
  const value = env[PRODUCT_ENV_PREFIX + name] ?? env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function readInteger(env: Environment, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function readTrustProxy(env: Environment): TrustProxy {
  const raw = read(env, 'TRUST_PROXY');
  if (raw === undefined || raw === 'false' || raw === 'none') return { mode: 'none' };
  if (raw === 'true' || raw === 'all') return { mode: 'all' };
  const ranges = raw.split(',').map((entry) => entry.trim()).filter(Boolean);
  for (const range of ranges) {
    const [address, prefix] = range.split('/');
    if (address === undefined || isIP(address) === 0 || (prefix !== undefined && !/^\d{1,3}$/.test(prefix))) {
      throw new ConfigError(`TRUST_PROXY entry "${range}" is not an IP address or CIDR range`);
    }
  }
  return { mode: 'list', ranges };
}

function readProvider(env: Environment, name: string): ProviderShortcut | null {
  const apiKey = read(env, `${name}_API_KEY`);
  if (apiKey === undefined) return null;
  const baseUrl = read(env, `${name}_BASE_URL`) ?? null;
  if (baseUrl !== null && hasUrlCredentials(baseUrl)) {
    throw new ConfigError(`${name}_BASE_URL must not carry a user name or password (https://user:password@host): ${name}_API_KEY is the credential`);
  }
  return { apiKey, baseUrl };
}

function readRedisKeyPrefix(env: Environment): string {
  const prefix = read(env, 'REDIS_KEY_PREFIX') ?? 'unigate:';
  if (!/^[A-Za-z0-9:_.{}-]{1,64}$/.test(prefix)) throw new ConfigError('REDIS_KEY_PREFIX must be 1-64 letters, digits or : _ . - { }');
  return prefix;
}

function readRedisDegradedMode(env: Environment): RedisDegradedMode {
  const mode = read(env, 'REDIS_DEGRADED_MODE') ?? 'share';
  if (mode !== 'share' && mode !== 'deny') throw new ConfigError(`REDIS_DEGRADED_MODE must be share or deny, got "${mode}"`);
  return mode;
}

function readRouting(env: Environment): RoutingConfig {
  const cooldownMs = readInteger(env, 'BREAKER_COOLDOWN_MS', 10_000, 100, 3_600_000);
  return {
    maxAttempts: readInteger(env, 'ROUTING_MAX_ATTEMPTS', 3, 1, 10),
    retryBudgetMs: readInteger(env, 'RETRY_BUDGET_MS', 30_000, 100, 3_600_000),
    breakerFailureThreshold: readInteger(env, 'BREAKER_FAILURE_THRESHOLD', 5, 1, 1000),
    breakerFailureRatePercent: readInteger(env, 'BREAKER_FAILURE_RATE', 50, 1, 100),
    breakerMinimumRequests: readInteger(env, 'BREAKER_MIN_REQUESTS', 20, 1, 100_000),
    breakerWindowMs: readInteger(env, 'BREAKER_WINDOW_MS', 60_000, 1000, 3_600_000),
    breakerCooldownMs: cooldownMs,
    breakerMaxCooldownMs: readInteger(env, 'BREAKER_MAX_COOLDOWN_MS', Math.max(300_000, cooldownMs), cooldownMs, 86_400_000),
    probeIntervalMs: readInteger(env, 'HEALTH_PROBE_INTERVAL_SECONDS', 0, 0, 86_400) * 1000,
    probeConcurrency: readInteger(env, 'HEALTH_PROBE_CONCURRENCY', 2, 1, 64),
  };
}

function readBoolean(env: Environment, name: string, fallback: boolean): boolean {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function readListenerLimits(env: Environment): ListenerLimits {
  return {
    headersTimeoutMs: readInteger(env, 'HEADERS_TIMEOUT_MS', 10_000, 1000, 600_000),
    requestTimeoutMs: readInteger(env, 'REQUEST_TIMEOUT_MS', 60_000, 0, 3_600_000),
    keepAliveTimeoutMs: readInteger(env, 'KEEP_ALIVE_TIMEOUT_MS', 65_000, 1000, 600_000),
    maxConnectionsPerIp: readInteger(env, 'MAX_CONNECTIONS_PER_IP', 1000, 0, 1_000_000),
    maxHeaderBytes: readInteger(env, 'MAX_HEADER_BYTES', 16 * 1024, 1024, 1024 * 1024),
    maxHeadersCount: readInteger(env, 'MAX_HEADERS_COUNT', 100, 10, 2000),
    // Room for a burst of 1,000 and more connections opened at once (agents' parallel streams): past the queue the
    // kernel drops the handshake and the client waits for its retry (1 s, then 3 s), which a busy loop makes likely.
    // The kernel caps it at net.core.somaxconn (4096 on Linux since 5.4).
    listenBacklog: readInteger(env, 'LISTEN_BACKLOG', 4096, 1, 65_535),
    // libuv accepts one connection per listening socket and turn of the loop: a busy loop takes a burst of new
    // connections that many turns (http/accept-sockets.ts).
    acceptSockets: readInteger(env, 'ACCEPT_SOCKETS', 1, 1, 64),
    admissionMaxInFlight: readInteger(env, 'ADMISSION_MAX_IN_FLIGHT', 10_000, 0, 1_000_000),
    admissionQueueTargetMs: readInteger(env, 'ADMISSION_QUEUE_TARGET_MS', 20, 0, 60_000),
  };
}

function readAuthFailureLimits(env: Environment): AuthFailureLimits {
  return {
    limit: readInteger(env, 'AUTH_FAILURE_LIMIT', 30, 1, 1_000_000),
    windowSeconds: readInteger(env, 'AUTH_FAILURE_WINDOW_SECONDS', 60, 1, 86_400),
  };
}

/** SOURCE_COMMIT (or GIT_COMMIT, as CI systems name it): the commit this deployment runs, for /api/status. */
function readSourceCommit(env: Environment): string | null {
  const commit = read(env, 'SOURCE_COMMIT') ?? read(env, 'GIT_COMMIT') ?? null;
  if (commit !== null && !/^[0-9A-Za-z._-]{1,64}$/.test(commit)) throw new ConfigError('SOURCE_COMMIT must be a commit id (letters, digits, ".", "_" or "-", at most 64)');
  return commit;
}

/** MAIL_FROM: `address` or `Name <address>`; default `<brand> <noreply@localhost>`. */
function readMailFrom(env: Environment, brand: string): string {
  const from = read(env, 'MAIL_FROM') ?? `${brand} <noreply@localhost>`;
  if (from.length > 320 || !/^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(from)) {
    throw new ConfigError('MAIL_FROM must be an email address or "Name <address>"');
  }
  return from;
}

/** SMTP_URL: smtp:// or smtps:// (nodemailer's connection URL). */
function readSmtpUrl(env: Environment): string | null {
  const url = read(env, 'SMTP_URL');
  if (url === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('SMTP_URL is not a URL (expected smtp://user:pass@host:port or smtps://…)');
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') throw new ConfigError('SMTP_URL must start with smtp:// or smtps://');
  if (parsed.hostname === '') throw new ConfigError('SMTP_URL has no host');
  return url;
}

/** An http(s) origin (no path, query or fragment), without its trailing slash. */
function readOrigin(env: Environment, name: string): string | null {
  const raw = read(env, name);
  if (raw === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a URL (expected e.g. https://console.example.com)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`${name} must start with http:// or https://`);
  if ((parsed.pathname !== '/' && parsed.pathname !== '') || parsed.search !== '' || parsed.hash !== '' || parsed.username !== '') {
    throw new ConfigError(`${name} must be an origin only (scheme, host and port), without a path`);
  }
  return parsed.origin;
}

/** One part's configuration from its own reader, its malformed settings reported as a ConfigError. */
function readPart<Config>(env: Environment, readPartConfig: (read: ReadSetting) => Config): Config {
  try {
    return readPartConfig((name) => read(env, name));
  } catch (error) {
    if (error instanceof SettingError) throw new ConfigError(error.message);
    throw error;
  }
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** The only place that reads the environment. Validated once at start. */
export function loadConfig(env: Environment = process.env, cwd: string = process.cwd()): GatewayConfig {
  const dataDirectory = path.resolve(cwd, read(env, 'DATA_DIR') ?? './data');
  const defaultConfigFile = path.resolve(cwd, 'gateway.yaml');
  const configFile = read(env, 'GATEWAY_CONFIG') ?? (existsSync(defaultConfigFile) ? defaultConfigFile : null);
  const databaseUrl = read(env, 'DATABASE_URL') ?? `sqlite:${path.join(dataDirectory, 'gateway.db')}`;
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
  }
  const logLevel = (read(env, 'LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const keyBrand = read(env, 'KEY_BRAND') ?? 'unigate';
  if (!/^[a-z][a-z0-9]{1,15}$/.test(keyBrand)) throw new ConfigError('KEY_BRAND must be 2-16 lowercase letters or digits');
  if (readMemoryAllocator(env) === null) throw new ConfigError(`${MEMORY_ALLOCATOR_SETTING} must be jemalloc or system, got "${read(env, MEMORY_ALLOCATOR_SETTING)}"`);

  return {
    host: read(env, 'HOST') ?? '127.0.0.1',
    port: readInteger(env, 'PORT', 8080, 0, 65535),
    consolePort: readInteger(env, 'CONSOLE_PORT', 8081, 0, 65535),
    // CONSOLE_PUBLIC_URL is the deprecated name of CONSOLE_URL (card payments read it before the two were one).
    consoleUrl: readOrigin(env, 'CONSOLE_URL') ?? readOrigin(env, 'CONSOLE_PUBLIC_URL'),
    apiPublicUrl: readOrigin(env, 'API_PUBLIC_URL'),
    consoleSignUp: readBoolean(env, 'CONSOLE_SIGN_UP', true),
    databaseUrl,
    redisUrl: read(env, 'REDIS_URL') ?? null,
    redisKeyPrefix: readRedisKeyPrefix(env),
    responseCacheLookupTimeoutMs: readInteger(env, 'RESPONSE_CACHE_LOOKUP_TIMEOUT_MS', 250, 1, 60_000),
    concurrencyLeaseSeconds: readInteger(env, 'CONCURRENCY_LEASE_SECONDS', 30, 1, 3600),
    redisDegradedMode: readRedisDegradedMode(env),
    adminToken: read(env, 'ADMIN_TOKEN') ?? null,
    configFile: configFile === null ? null : path.resolve(cwd, configFile),
    smtpUrl: readSmtpUrl(env),
    mailFrom: readMailFrom(env, keyBrand),
    alertCheckSeconds: readInteger(env, 'ALERT_CHECK_SECONDS', 30, 1, 86_400),
    workers: readInteger(env, 'WORKERS', 1, 1, 64),
    workerIndex: readInteger(env, 'WORKER_INDEX', 0, 0, 63),
    instanceId: readInstanceId(env),
    sourceCommit: readSourceCommit(env),
    instanceStaleSeconds: readInteger(env, 'INSTANCE_STALE_SECONDS', 30, 2, 3600),
    writeBatchMs: readInteger(env, 'WRITE_BATCH_MS', 250, 1, 1000),
    dataDirectory,
    secretKey: read(env, 'SECRET_KEY') ?? null,
    trustProxy: readTrustProxy(env),
    maxBodyBytes: readInteger(env, 'MAX_BODY_BYTES', 10 * 1024 * 1024, 1024, 512 * 1024 * 1024),
    listener: readListenerLimits(env),
    authFailures: readAuthFailureLimits(env),
    migrateOnStart: readBoolean(env, 'MIGRATE_ON_START', true),
    drainSeconds: readInteger(env, 'DRAIN_SECONDS', 0, 0, 600),
    memoryReliefIdleSeconds: readInteger(env, 'MEMORY_RELIEF_IDLE_SECONDS', 10, 0, 86_400),
    keyBrand,
    publicRateLimitPerMinute: readInteger(env, 'PUBLIC_RATE_LIMIT_PER_MINUTE', 60, 1, 1_000_000),
    fxSourceUrl: read(env, 'FX_SOURCE_URL') ?? null,
    fxRefreshSeconds: readInteger(env, 'FX_REFRESH_SECONDS', 3600, 10, 86_400 * 7),
    logLevel,
    telemetry: readPart(env, readTelemetryConfig),
    routing: readRouting(env),
    metricsPort: read(env, 'METRICS_PORT') === undefined ? null : readInteger(env, 'METRICS_PORT', 0, 0, 65535),
    usageRetentionDays: read(env, 'USAGE_RETENTION_DAYS') === undefined ? null : readInteger(env, 'USAGE_RETENTION_DAYS', 0, 1, 36_500),
    commerce: readPart(env, readCommerceConfig),
    mcp: {
      allowPrivateAddresses: readBoolean(env, 'MCP_ALLOW_PRIVATE_ADDRESSES', false),
      healthCheckIntervalMs: readInteger(env, 'MCP_HEALTH_CHECK_INTERVAL_SECONDS', 60, 0, 86_400) * 1000,
      healthCheckTimeoutMs: readInteger(env, 'MCP_HEALTH_CHECK_TIMEOUT_SECONDS', 10, 1, 300) * 1000,
      allowStdio: readBoolean(env, 'MCP_ALLOW_STDIO', false),
      allowAccountServers: readBoolean(env, 'MCP_ALLOW_ACCOUNT_SERVERS', false),
    },
    webhooks: readPart(env, readWebhookConfig),
    batches: readPart(env, readBatchConfig),
    realtime: readPart(env, readRealtimeConfig),
    sso: readPart(env, readSsoConfig),
    providers: {
      openai: readProvider(env, 'OPENAI'),
      anthropic: readProvider(env, 'ANTHROPIC'),
      gemini: readProvider(env, 'GEMINI'),
    },
  };
}
