import { GuardrailBook } from '../guardrail-policies/guardrail-book.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { resolveAdminToken } from '../auth/admin-token.js';
import { createClientIpResolver } from '../auth/client-ip.js';
import { KeyVerifier } from '../auth/key-verifier.js';
import { LockoutReport } from '../auth/lockout-report.js';
import { Ledger } from '../billing/ledger.js';
import { NANO_PER_USD } from '../billing/money.js';
import { SettlementOutbox, settlementOutboxDirectory } from '../billing/settlement-outbox.js';
import { SubscriptionBook } from '../billing/subscription-book.js';
import { BundledCatalog } from '../catalog/bundled-catalog.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import { createCommerceServices } from '../console-billing/commerce-services.js';
import { CustomerRuleBook } from '../customers/customer-rule-book.js';
import { Readiness } from '../health/readiness.js';
import { apiRouteLabels } from '../http/routes/api-routes.js';
import { openSharedLimits } from '../limits/shared-limits.js';
import { TierBook } from '../limits/tier-book.js';
import { createMailer } from '../mail/create-mailer.js';
import { AccountLifecycle } from '../management/account-lifecycle.js';
import type { OutboundPolicy } from '../mcp/upstream-session.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { CredentialRotation } from '../relay/credential-rotation.js';
import { LiveStreams } from '../relay/live-streams.js';
import { openResponseCache } from '../relay/response-cache/open-response-cache.js';
import { Catalog } from '../routing/catalog.js';
import { openChannelHealth } from '../routing/open-channel-health.js';
import { RoutingRefresh } from '../routing/routing-refresh.js';
import type { GatewayServices } from '../services.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { loadOnce } from '../shared/load-once.js';
import { createLogger, type Logger } from '../shared/logger.js';
import type { OpenedResources } from '../shared/opened-resources.js';
import type { Storage } from '../storage/storage.js';
import { openTelemetry } from '../telemetry/telemetry.js';
import { AdapterRegistry } from '../upstreams/adapter-registry.js';
import { connectionLimitsByOrigin } from '../upstreams/connection-limits.js';
import { HttpTransport } from '../upstreams/http-transport.js';
import { deadLetterDirectory } from '../usage-log/dead-letter-file.js';
import { DeadLetterReplayer } from '../usage-log/dead-letter-replayer.js';
import { UsageLogWriter } from '../usage-log/usage-log-writer.js';
import { prepareStorage, type StorageOptions } from './prepare-storage.js';

export interface StartOptions extends StorageOptions {
  clock?: Clock;
  logger?: Logger;
  /** How often the routing snapshot is re-read from storage (changes made by other instances). */
  catalogRefreshMs?: number;
}

/** Money: see docs/operators.md ("Money") for what each figure means; settlements wait up to WRITE_BATCH_MS. */
const LEDGER_OPTIONS = {
  maxBatch: 500,
  lease: { capNano: NANO_PER_USD / 2n, unitsAhead: 256n, ceilingNano: 10n * NANO_PER_USD, scarcityFactor: 64n, shareDivisor: 8n, idleMs: 2000 },
  factsTtlMs: 2000,
};

/** Lockout starts written to the log and the audit log per minute and instance; the metrics count every one. */
const LOCKOUT_REPORTS_PER_MINUTE = 10;

/**
 * INSTANCE_ID, or host name + port + worker index: stable across restarts, so a restarted instance releases what its
 * previous run held. With an ephemeral port (0) there is nothing stable to derive from: a unique id is made, and
 * a crashed run's holds are released by the heartbeat sweep instead.
 */
function instanceIdOf(config: GatewayConfig): string {
  if (config.instanceId !== null) return config.instanceId;
  if (config.port === 0) return `${hostname()}:ephemeral:${process.pid}:${randomBytes(4).toString('hex')}`;
  return `${hostname()}:${config.port}:${config.workerIndex}`;
}

/** Re-reads channels and models, then the channels' upstream keys. */
function reloadRouting(services: GatewayServices): Promise<void> {
  return services.catalog.reload().then(() => services.credentials.refresh());
}

/** What the caches of this process that are not subscribers of their own do on an invalidation. */
function followInvalidations(services: GatewayServices): void {
  const { credentials, ledger, invalidation } = services;
  invalidation.subscribe((message) => {
    switch (message.kind) {
      case 'catalog':
        if (message.channelId !== undefined) credentials.forgetChannel(message.channelId);
        return reloadRouting(services);
      case 'all':
        return reloadRouting(services);
      case 'account':
        // The credit line may have changed: the next reservation asks storage (the lease is recomputed).
        ledger.forgetBalance(message.id);
        return undefined;
      case 'customers':
        // A customer's budget may have changed: its next reservation asks storage.
        ledger.forgetCustomerBudgets(message.id);
        return undefined;
      case 'key':
        // The quota cap may have changed.
        ledger.forgetKey(message.id);
        return undefined;
      case 'tier':
      case 'guardrails':
        return undefined;
    }
  });
}

/**
 * How upstream MCP servers are reached: OAuth tokens always, local stdio processes only when MCP_ALLOW_STDIO is on.
 * Both are made (their modules loaded) at their first use: a gateway that reaches no MCP server never loads them.
 */
function mcpOutbound(config: GatewayConfig, storage: Storage, clock: Clock, logger: Logger): OutboundPolicy {
  const { mcp } = config;
  const servers = storage.mcpServers;
  return {
    allowPrivateAddresses: mcp.allowPrivateAddresses,
    oauthTokens: loadOnce(async () => {
      const { OAuthTokens } = await import('../mcp/oauth-tokens.js');
      return new OAuthTokens({ servers, clock, allowPrivateAddresses: mcp.allowPrivateAddresses, timeoutMs: mcp.healthCheckTimeoutMs });
    }),
    ...(mcp.allowStdio
      ? {
        stdioProcesses: loadOnce(async () => {
          const [{ StdioProcesses }, { CLIENT_INFO }] = await Promise.all([import('../mcp/stdio-processes.js'), import('../mcp/upstream-session.js')]);
          return new StdioProcesses({ servers, clock, logger, clientInfo: CLIENT_INFO });
        }),
      }
      : {}),
  };
}

/** The ledger of this instance: its leases, heartbeat, stream checkpoints and outbox follow the configuration. */
function openLedger(storage: Storage, config: GatewayConfig, clock: Clock, logger: Logger, instanceId: string): Ledger {
  return new Ledger(storage, clock, logger, {
    ...LEDGER_OPTIONS,
    flushIntervalMs: config.writeBatchMs,
    instanceId,
    // A heartbeat every sixth of the stale interval (5 s for the default 30 s), so a live instance never looks gone.
    heartbeatMs: Math.min(5000, Math.floor((config.instanceStaleSeconds * 1000) / 6)),
    staleAfterMs: config.instanceStaleSeconds * 1000,
    // Streams in flight are checkpointed every 2 s (every heartbeat when those are more frequent): a crash loses at
    // most that much of a stream's charge.
    checkpointMs: Math.min(2000, Math.floor((config.instanceStaleSeconds * 1000) / 6)),
    // Settlements the database cannot take wait on disk (this instance id's folder) until it can.
    outbox: new SettlementOutbox(settlementOutboxDirectory(config.dataDirectory, instanceId)),
  });
}

/** Lockout starts are reported to the log and the audit log (a few a minute) and counted by the metrics. */
function lockoutReport(config: GatewayConfig, storage: Storage, metrics: GatewayMetrics, clock: Clock, logger: Logger): LockoutReport {
  return new LockoutReport({
    clock,
    logger,
    appendAudit: (entry) => storage.operators.appendAudit(entry),
    countStarted: (surface) => metrics.authLockouts.labels(surface).inc(),
    countRefused: (surface) => metrics.authLockoutRefusals.labels(surface).inc(),
    limit: config.authFailures.limit,
    windowSeconds: config.authFailures.windowSeconds,
    reportsPerMinute: LOCKOUT_REPORTS_PER_MINUTE,
  });
}

export interface OpenedServices {
  services: GatewayServices;
  /** Set when the admin token was generated at this start; print it once. */
  generatedAdminToken: string | null;
}

/**
 * Builds every service once (each closed through `opened`, newest first) and brings them to the state the first
 * request needs: holds of a crashed run released, routing and tiers read, invalidations followed.
 */
export async function openServices(config: GatewayConfig, options: StartOptions, opened: OpenedResources): Promise<OpenedServices> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.logLevel);
  const metrics = new GatewayMetrics(() => channelHealth.health.states());
  opened.add(() => metrics.stop());
  const storage = await prepareStorage(config, { ...options, observeWrite: metrics.observeSqliteWrite }, logger, clock);
  opened.add(() => storage.close());
  const admin = await resolveAdminToken(storage, config.adminToken, clock.now());
  const http = new HttpTransport();
  opened.add(() => http.close());
  const adapters = new AdapterRegistry(http, clock);
  const usageLog = new UsageLogWriter(storage, logger, { deadLetterDirectory: deadLetterDirectory(config.dataDirectory), intervalMs: config.writeBatchMs });
  opened.add(() => usageLog.close());
  const instanceId = instanceIdOf(config);
  const shared = await openSharedLimits(config, logger, { memberId: instanceId });
  opened.add(() => shared.close());
  const channelHealth = await openChannelHealth(config, clock, logger);
  opened.add(() => channelHealth.close());
  const telemetry = await openTelemetry(config.telemetry, logger, (path) => apiRouteLabels(path).route);
  opened.add(() => telemetry.shutdown());
  metrics.observeSharedLimits(() => shared.state());
  const keys = new KeyVerifier(storage, clock, { brand: config.keyBrand, ttlMs: 1000, liveTtlMs: 30_000, maxEntries: 100_000 }, shared.invalidation);
  const ledger = openLedger(storage, config, clock, logger, instanceId);
  // Rows settled with their settlement (PostgreSQL) are stored once the ledger flushes: the usage log's flush waits for it.
  usageLog.carriedBy(() => ledger.flush());
  const subscriptions = new SubscriptionBook(storage, clock, { ttlMs: 2000, maxEntries: 100_000 });
  const base: Omit<GatewayServices, 'commerce'> = {
    config,
    clock,
    logger,
    storage,
    adapters,
    catalog: new Catalog(storage, logger, (channel) => adapters.supports(channel.type), new BundledCatalog(clock.now())),
    credentials: new CredentialRotation(logger, clock, storage.channelKeyFlags),
    health: channelHealth.health,
    metrics,
    telemetry,
    keys,
    ledger,
    subscriptions,
    usageLog,
    limiter: shared.limiter,
    tiers: new TierBook(storage, shared.invalidation, logger, { refreshMs: 500, liveRefreshMs: 60_000 }),
    invalidation: shared.invalidation,
    adminToken: admin.verifier,
    clientIp: createClientIpResolver(config.trustProxy),
    mailer: createMailer(config, logger),
    accountLifecycle: new AccountLifecycle({ storage, keys, ledger, subscriptions, clock, logger }),
    startedAt: clock.now(),
    readiness: new Readiness(storage, shared.ping, { timeoutMs: 2000, cacheMs: 1000 }),
    authFailures: shared.authFailures,
    lockouts: lockoutReport(config, storage, metrics, clock, logger),
    responseCache: openResponseCache(config, logger),
    liveStreams: new LiveStreams(storage, clock, logger, shared.invalidation),
    customers: new CustomerRuleBook(storage.customers, clock, shared.invalidation),
    guardrails: new GuardrailBook(storage.guardrails, clock, shared.invalidation),
    mcpOutbound: mcpOutbound(config, storage, clock, logger),
  };
  opened.add(() => base.mailer.close());
  opened.add(() => base.responseCache.close());
  opened.add(() => base.guardrails.close());
  opened.add(() => base.mcpOutbound.stdioProcesses?.loaded()?.close());
  const services: GatewayServices = { ...base, commerce: await createCommerceServices(base) };
  await bringUp(services, http, options, opened);
  return { services, generatedAdminToken: admin.generated };
}

/** What the services do before the first request, and the loops that keep them current. */
async function bringUp(services: GatewayServices, http: HttpTransport, options: StartOptions, opened: OpenedResources): Promise<void> {
  const { config, storage, clock, logger, metrics, invalidation } = services;
  // A disabled or deleted account signs out of the console at once; a deleted one also loses its buyer details and
  // its single sign-on (its email domains are free for another account to claim; its SCIM token stops working).
  services.accountLifecycle.onChange(async (event, account) => {
    if (event === 'enabled') return;
    await storage.console.deleteAccountSessions(account.id);
    if (event !== 'deleted') return;
    await storage.console.eraseUsersOnlyIn(account.id, clock.now());
    await storage.billingProfiles.erase(account.id);
    await storage.sso.deleteConnection(account.id);
  });
  // Holds left by a crashed run of this instance are released before the first request.
  await services.ledger.start();
  opened.add(() => services.ledger.close());
  // Usage rows the database refused are written from their files once it answers again, by this instance itself.
  const keptUsage = new DeadLetterReplayer(storage.usage, deadLetterDirectory(config.dataDirectory), clock, logger);
  keptUsage.start();
  opened.add(() => keptUsage.stop());
  metrics.observeOutbox(() => ({ settlements: services.ledger.keptSettlements, usageRows: keptUsage.pendingRows }));
  services.catalog.onReload((channels) => services.health.syncChannels(channels));
  services.catalog.onReload((channels) => http.setOriginLimits(connectionLimitsByOrigin(channels)));
  followInvalidations(services);
  await services.catalog.reload();
  await services.credentials.refresh();
  await services.tiers.start();
  opened.add(() => services.tiers.stop());
  // gateway.yaml may have changed tiers, channels and models: instances already running re-read theirs.
  if (options.applyConfiguration ?? true) {
    await invalidation.publish({ kind: 'tier', name: '*' });
    await invalidation.publish({ kind: 'catalog' });
  }
  const routingRefresh = new RoutingRefresh(() => reloadRouting(services), invalidation, logger, options.catalogRefreshMs ?? 5000);
  services.catalog.onReload(() => routingRefresh.reloaded());
  routingRefresh.start();
  opened.add(() => routingRefresh.stop());
}
