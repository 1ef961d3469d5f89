import { GuardrailBook } from './guardrail-policies/guardrail-book.js';
import type { IncomingMessage, Server } from 'node:http';
import { createServer } from './shared/node-http.js';
import type { Duplex } from 'node:stream';
import { AlertChecker } from './alerts/alert-checker.js';
import { SignUpCreditExpiry } from './sign-up-credit/sign-up-credit-expiry.js';
import { resolveAdminToken } from './auth/admin-token.js';
import { createClientIpResolver } from './auth/client-ip.js';
import { KeyVerifier } from './auth/key-verifier.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Ledger } from './billing/ledger.js';
import { SubscriptionBook } from './billing/subscription-book.js';
import { NANO_PER_USD } from './billing/money.js';
import type { GatewayConfig } from './config/gateway-config.js';
import { resolveSecretKey } from './config/secret-key.js';
import { LiveStreams } from './relay/live-streams.js';
import { createApiApp, createConsoleApp } from './app.js';
import { LockoutReport } from './auth/lockout-report.js';
import { ChannelProbes } from './health/channel-probes.js';
import { Readiness } from './health/readiness.js';
import { AdmissionControl, DEFAULT_ADMISSION_INTERVAL_MS, DEFAULT_ADMISSION_MIN_SHARE } from './http/admission-control.js';
import { hardenServer, refuseExcessHeaders, serverOptions } from './http/harden-server.js';
import { ListenerStop, trackInFlight } from './http/drain.js';
import { listenOn } from './http/accept-sockets.js';
import { SocketEndpoints } from './realtime/socket-endpoints.js';
import { responsesRouteHandler } from './http/routes/batch-endpoints.js';

import { openSharedLimits } from './limits/shared-limits.js';
import { openResponseCache } from './relay/response-cache/open-response-cache.js';
import { TierBook } from './limits/tier-book.js';
import { configFileModule } from './management/config-file-module.js';
import { BundledCatalog } from './catalog/bundled-catalog.js';
import { createMailer } from './mail/create-mailer.js';
import { createCommerceServices } from './console-billing/commerce-services.js';
import { AccountLifecycle } from './management/account-lifecycle.js';
import { FxRefresher } from './management/fx-refresher.js';
import { GatewayMetrics } from './metrics/gateway-metrics.js';
import { instrumentListener } from './metrics/instrument-listener.js';
import { apiRouteLabels } from './http/routes/api-routes.js';
import { startMetricsListener } from './metrics/metrics-listener.js';
import { testChannel } from './relay/channel-test.js';
import { CredentialRotation } from './relay/credential-rotation.js';
import { CustomerRuleBook } from './customers/customer-rule-book.js';
import { relayDependencies } from './relay/relay-dependencies.js';
import { Catalog } from './routing/catalog.js';
import { openChannelHealth } from './routing/open-channel-health.js';
import type { GatewayServices } from './services.js';
import { systemClock, type Clock } from './shared/clock.js';
import { createLogger, type Logger } from './shared/logger.js';
import { SecretBox } from './shared/secret-box.js';
import { openStorage } from './storage/open-storage.js';
import type { Storage } from './storage/storage.js';
import type { SqliteWriteObserver } from './storage/dialects.js';
import { AdapterRegistry } from './upstreams/adapter-registry.js';
import { connectionLimitsByOrigin } from './upstreams/connection-limits.js';
import { HttpTransport } from './upstreams/http-transport.js';
import { deadLetterDirectory } from './usage-log/dead-letter-file.js';
import { DeadLetterReplayer } from './usage-log/dead-letter-replayer.js';
import { SettlementOutbox, settlementOutboxDirectory } from './billing/settlement-outbox.js';
import { UsageLogWriter } from './usage-log/usage-log-writer.js';
import { UsageRetention } from './usage-log/usage-retention.js';
import { openTelemetry } from './telemetry/telemetry.js';
import { IdleMemoryRelief } from './shared/idle-memory-relief.js';
import { OpenedResources } from './shared/opened-resources.js';
import { WebhookDeliverer } from './webhooks/webhook-deliverer.js';
import { McpHealthSchedule } from './mcp/mcp-health-schedule.js';
import type { OutboundPolicy } from './mcp/upstream-session.js';
import { loadOnce } from './shared/load-once.js';
import { ProviderBatchRunner } from './batches/provider-batches/provider-batch-runner.js';
import { anthropicBatchApi } from './upstreams/batch-apis/anthropic-batch-api.js';
import { chatLinesToAnthropic } from './operations/batch-line-translation.js';
import { geminiBatchApi } from './upstreams/batch-apis/gemini-batch-api.js';
import { openAIBatchApi } from './upstreams/batch-apis/openai-batch-api.js';
import { BatchRunner } from './batches/batch-runner.js';
import { batchRoutes } from './http/routes/batch-endpoints.js';
import { WebhookSender } from './webhooks/webhook-sender.js';
import { ChannelHealthEvents } from './webhooks/channel-events.js';
import { RoutingRefresh } from './routing/routing-refresh.js';

/** Realtime sessions of a draining instance end this long before DRAIN_SECONDS is up, so their close handshakes finish in it. */
const REALTIME_DRAIN_MARGIN_MS = 500;

export interface StartOptions {
  clock?: Clock;
  logger?: Logger;
  /** Apply gateway.yaml and provider shortcuts (the primary does it once when there are several workers). */
  applyConfiguration?: boolean;
  /** Environment for `${VAR}` expansion in gateway.yaml. */
  env?: Record<string, string | undefined>;
  /** How often the routing snapshot is re-read from storage (changes made by other instances). */
  catalogRefreshMs?: number;
  /** Apply pending migrations; defaults to MIGRATE_ON_START (`unigate migrate` always does). */
  migrate?: boolean;
  /** SQLite: told how long each batched write transaction held the event loop. */
  observeWrite?: SqliteWriteObserver;
}

export interface RunningGateway {
  apiUrl: string;
  consoleUrl: string;
  /** The unauthenticated metrics listener (METRICS_PORT), when configured. */
  metricsUrl: string | null;
  services: GatewayServices;
  /** Set when the admin token was generated at this start; print it once. */
  generatedAdminToken: string | null;
  /** Runs batch lines from the queue (idle when BATCH_CONCURRENCY is 0). */
  batches: BatchRunner;
  close(): Promise<void>;
}

/**
 * Keeps new files' bytes in the configured bucket (files kept before stay readable from the database). The bucket's
 * client is loaded only when one is configured; it closes with the storage.
 */
async function attachFileStore(storage: Storage, config: GatewayConfig, logger: Logger): Promise<void> {
  const settings = config.batches.fileStore;
  if (settings.kind !== 's3') return;
  const [{ createS3FileStore }, { layeredFileStore }] = await Promise.all([import('./file-stores/s3-file-store.js'), import('./file-stores/layered-file-store.js')]);
  const bucket = createS3FileStore(settings);
  storage.fileContents = layeredFileStore(bucket, storage.fileContents);
  const closeStorage = storage.close.bind(storage);
  storage.close = async () => {
    await bucket.close();
    await closeStorage();
  };
  logger.info('file bytes kept in an S3 bucket', { endpoint: settings.endpoint, bucket: settings.bucket, prefix: settings.keyPrefix });
}

/** Opens storage and brings it to the configured state: migrations, gateway.yaml, provider shortcuts. */
export async function prepareStorage(config: GatewayConfig, options: StartOptions, logger: Logger, clock: Clock): Promise<Storage> {
  const secret = resolveSecretKey(config.secretKey, config.dataDirectory);
  if (secret.source === 'generated') logger.info('generated a key for encrypting upstream credentials', { file: `${config.dataDirectory}/secret.key` });
  const storage = await openStorage({
    url: config.databaseUrl,
    secretBox: new SecretBox(secret.key),
    migrate: options.migrate ?? config.migrateOnStart,
    ...(options.observeWrite === undefined ? {} : { observeWrite: options.observeWrite }),
  });
  await attachFileStore(storage, config, logger);
  if (options.applyConfiguration ?? true) {
    try {
      // The config file's and the shortcuts' modules (and the input schemas they share) load only when either is set.
      if (config.configFile !== null) {
        const { applyConfigFile } = await configFileModule.get();
        const applied = await applyConfigFile(config.configFile, storage, clock, options.env ?? process.env);
        logger.info('applied config file', { file: config.configFile, ...applied });
      }
      if (Object.values(config.providers).some((shortcut) => shortcut !== null)) {
        const { applyProviderShortcuts } = await import('./management/apply-provider-shortcuts.js');
        const shortcuts = await applyProviderShortcuts(config, storage, clock);
        if (shortcuts.length > 0) logger.info('provider env shortcuts applied', { channels: shortcuts });
      }
    } catch (error) {
      await storage.close();
      throw error;
    }
  }
  return storage;
}

/** Listens (on `sockets` listening sockets: http/accept-sockets.ts); the URL, and how to stop the extra sockets. */
async function listen(server: Server, host: string, port: number, backlog: number, sockets = 1): Promise<{ url: string; closeExtra: () => void }> {
  const { address, closeExtra } = await listenOn(server, { host, port, backlog, sockets });
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${shownHost}:${address.port}`, closeExtra };
}

/** A listener address this process can connect to: a wildcard host (0.0.0.0, ::) becomes the loopback. */
function reachableUrl(url: string): string {
  return url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:');
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
      const { OAuthTokens } = await import('./mcp/oauth-tokens.js');
      return new OAuthTokens({ servers, clock, allowPrivateAddresses: mcp.allowPrivateAddresses, timeoutMs: mcp.healthCheckTimeoutMs });
    }),
    ...(mcp.allowStdio
      ? {
        stdioProcesses: loadOnce(async () => {
          const [{ StdioProcesses }, { CLIENT_INFO }] = await Promise.all([import('./mcp/stdio-processes.js'), import('./mcp/upstream-session.js')]);
          return new StdioProcesses({ servers, clock, logger, clientInfo: CLIENT_INFO });
        }),
      }
      : {}),
  };
}

/**
 * Health checks of the registered MCP servers, unless MCP_HEALTH_CHECK_INTERVAL_SECONDS is 0; the checks themselves
 * are loaded by the first pass that finds a server to check.
 */
function startMcpHealthChecks(services: GatewayServices): McpHealthSchedule | null {
  const { mcp } = services.config;
  if (mcp.healthCheckIntervalMs === 0) return null;
  const checks = new McpHealthSchedule(
    { servers: services.storage.mcpServers, clock: services.clock, logger: services.logger, outbound: services.mcpOutbound },
    { intervalMs: mcp.healthCheckIntervalMs, timeoutMs: mcp.healthCheckTimeoutMs, concurrency: 4, accountServers: mcp.allowAccountServers },
  );
  checks.start();
  return checks;
}

/** Background probes of idle channels, when HEALTH_PROBE_INTERVAL_SECONDS is set; each worker probes for its own health. */
function startChannelProbes(services: GatewayServices): ChannelProbes | null {
  const { routing } = services.config;
  if (routing.probeIntervalMs === 0) return null;
  const relay = relayDependencies(services, 1);
  const probes = new ChannelProbes({
    catalog: services.catalog,
    health: services.health,
    clock: services.clock,
    logger: services.logger,
    probe: (target, signal) => testChannel(relay, target.channel, target.model, target.upstreamModel, signal, { logLabel: 'background-probe' }),
  }, { intervalMs: routing.probeIntervalMs, concurrency: routing.probeConcurrency });
  probes.start();
  return probes;
}

/**
 * The composition root: builds every service once, then starts both listeners. When a step fails (a port in use, a
 * database or Redis that refuses), what the earlier steps opened is closed before the error is passed on.
 */
export async function startGateway(config: GatewayConfig, options: StartOptions = {}): Promise<RunningGateway> {
  const opened = new OpenedResources();
  try {
    return await assembleGateway(config, options, opened);
  } catch (error) {
    // The start's own error is the one worth reporting.
    await opened.closeAll().catch(() => undefined);
    throw error;
  }
}

async function assembleGateway(config: GatewayConfig, options: StartOptions, opened: OpenedResources): Promise<RunningGateway> {
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
  const ledger = new Ledger(storage, clock, logger, {
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
    lockouts: new LockoutReport({
      clock,
      logger,
      appendAudit: (entry) => storage.operators.appendAudit(entry),
      countStarted: (surface) => metrics.authLockouts.labels(surface).inc(),
      countRefused: (surface) => metrics.authLockoutRefusals.labels(surface).inc(),
      limit: config.authFailures.limit,
      windowSeconds: config.authFailures.windowSeconds,
      reportsPerMinute: LOCKOUT_REPORTS_PER_MINUTE,
    }),
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
    await shared.invalidation.publish({ kind: 'tier', name: '*' });
    await shared.invalidation.publish({ kind: 'catalog' });
  }
  const routingRefresh = new RoutingRefresh(() => reloadRouting(services), shared.invalidation, logger, options.catalogRefreshMs ?? 5000);
  services.catalog.onReload(() => routingRefresh.reloaded());
  routingRefresh.start();
  opened.add(() => routingRefresh.stop());
  const fx = config.fxSourceUrl === null ? null : new FxRefresher(config.fxSourceUrl, config.fxRefreshSeconds * 1000, storage, clock, logger);
  fx?.start();
  opened.add(() => fx?.stop());
  const alerts = new AlertChecker(storage, services.mailer, clock, logger, { intervalMs: config.alertCheckSeconds * 1000 });
  alerts.start();
  opened.add(() => alerts.stop());
  const signUpCreditExpiry = new SignUpCreditExpiry(storage, services.ledger, clock, logger);
  signUpCreditExpiry.start();
  opened.add(() => signUpCreditExpiry.stop());
  // The webhook outbox is delivered by every instance; a conditional lease keeps each attempt to one of them.
  const webhookSender = new WebhookSender(config.webhooks);
  opened.add(() => webhookSender.close());
  const webhooks = new WebhookDeliverer(storage.webhooks, webhookSender, clock, logger, config.webhooks);
  webhooks.start();
  opened.add(() => webhooks.stop());
  // Batch lines are run by every instance from the queue in the database, a few at a time each.
  const batches = new BatchRunner(services, batchRoutes(services));
  if (config.batches.concurrency > 0) batches.start();
  opened.add(() => batches.close());
  // Batches sent to a provider's own batch API are submitted, polled and collected by every instance (one at a time each).
  const providerBatches = new ProviderBatchRunner(services, batchRoutes(services), {
    openai: openAIBatchApi, anthropic: { ...anthropicBatchApi, translations: { '/v1/chat/completions': chatLinesToAnthropic } }, gemini: geminiBatchApi,
  }, () => batches.poke());
  providerBatches.start();
  opened.add(() => providerBatches.close());
  const channelEvents = new ChannelHealthEvents(storage.webhooks, (id) => services.catalog.channels().find((channel) => channel.id === id)?.name ?? null, clock, logger);
  services.health.onChange((change) => channelEvents.observe(change));
  // Bought plan periods are renewed from the balance within the hour before they end (every instance checks).
  services.commerce.plans.start(60_000);
  opened.add(() => services.commerce.plans.stop());
  // One worker per process group prunes; across instances the storage's pruning lock lets one at a time.
  const retention = config.usageRetentionDays === null || config.workerIndex !== 0
    ? null
    // A SQLite delete runs on the event loop: 1,000 rows cost about 10 ms of it, 5,000 about 50 ms.
    : new UsageRetention(storage.usage, clock, logger, { retentionDays: config.usageRetentionDays, batchSize: storage.dialect === 'sqlite' ? 1000 : 5000 });
  retention?.start();
  opened.add(() => retention?.stop());
  const probes = startChannelProbes(services);
  opened.add(() => probes?.stop());
  const mcpHealthChecks = startMcpHealthChecks(services);
  opened.add(() => mcpHealthChecks?.stop());

  const admission = new AdmissionControl({
    maxInFlight: config.listener.admissionMaxInFlight,
    queueTargetMs: config.listener.admissionQueueTargetMs,
    intervalMs: DEFAULT_ADMISSION_INTERVAL_MS,
    minShare: DEFAULT_ADMISSION_MIN_SHARE,
  }, () => metrics.shed.inc());
  services.readiness.followOverload(() => admission.overloaded);
  if (admission.enabled) metrics.followAdmission(admission);
  admission.start();
  opened.add(() => admission.stop());
  const api = instrumentListener(createApiApp(services, admission), metrics, apiRouteLabels);
  // Both listeners' addresses are known only once they listen; the console reads them when it needs them.
  const listening = { api: '', console: '' };
  const consoleApp = trackInFlight(createConsoleApp(services, {
    console: () => config.consoleUrl ?? listening.console,
    apiPublic: () => config.apiPublicUrl ?? listening.api,
    apiInternal: () => reachableUrl(listening.api),
  }));
  const apiStop = new ListenerStop(api.answers, config.drainSeconds);
  const consoleStop = new ListenerStop(consoleApp.answers, config.drainSeconds);
  const apiServer = createServer(serverOptions(config.listener), refuseExcessHeaders(apiStop.withConnectionHeaders(api.listener), config.listener));
  const consoleServer = createServer(serverOptions(config.listener), refuseExcessHeaders(consoleStop.withConnectionHeaders(consoleApp.listener), config.listener));
  apiStop.follow(apiServer);
  // Realtime sessions are WebSocket upgrades of the API listener; a draining instance ends them within DRAIN_SECONDS.
  const sockets = new SocketEndpoints(services, config.realtime, responsesRouteHandler(services));
  apiServer.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => sockets.upgrade(request, socket, head));
  opened.add(() => sockets.closeAll());
  consoleStop.follow(consoleServer);
  hardenServer(apiServer, config.listener, logger);
  hardenServer(consoleServer, config.listener, logger);
  // The listeners stop together (each may wait for its connections) and before everything they use.
  const listenerStops: Array<() => Promise<void>> = [];
  opened.add(() => Promise.all(listenerStops.map((stop) => stop())));
  const apiListening = await listen(apiServer, config.host, config.port, config.listener.listenBacklog, config.listener.acceptSockets);
  const apiUrl = apiListening.url;
  listenerStops.push(() => {
    apiListening.closeExtra();
    return apiStop.stop(apiServer, 10_000);
  });
  const { url: consoleUrl } = await listen(consoleServer, config.host, config.consolePort, config.listener.listenBacklog);
  listenerStops.push(() => consoleStop.stop(consoleServer, 1000));
  listening.api = apiUrl;
  listening.console = consoleUrl;
  if (config.consoleUrl === null && (config.host === '0.0.0.0' || config.host === '::')) {
    logger.warn('CONSOLE_URL is not set: console mails will link to the listener address; set it to the address users open', { console: consoleUrl });
  }
  const metricsListener = config.metricsPort === null ? null : await startMetricsListener(config.host, config.metricsPort, metrics);
  if (metricsListener !== null) listenerStops.push(() => metricsListener.close());
  const memoryRelief = new IdleMemoryRelief({
    idleMs: config.memoryReliefIdleSeconds * 1000,
    inFlight: () => api.answers.size + consoleApp.answers.size,
    onCollected: ({ durationMs, cpuMs, heapTotalBefore, heapTotalAfter }) => logger.debug('idle memory relief: full garbage collection', {
      duration_ms: Math.round(durationMs),
      cpu_ms: Math.round(cpuMs),
      heap_mib_before: Math.round(heapTotalBefore / 2 ** 20),
      heap_mib_after: Math.round(heapTotalAfter / 2 ** 20),
    }),
  });
  memoryRelief.start();
  opened.add(() => memoryRelief.stop());

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // Load balancers see /readyz fail and stop sending new requests while this instance still serves them.
      services.readiness.startDraining();
      apiStop.startDraining();
      sockets.drain(Math.max(0, config.drainSeconds * 1000 - REALTIME_DRAIN_MARGIN_MS));
      consoleStop.startDraining();
      // Local MCP servers still starting are ended now: requests waiting on them fail instead of holding the listeners.
      base.mcpOutbound.stdioProcesses?.loaded()?.drain();
      if (config.drainSeconds > 0) await new Promise((resolve) => setTimeout(resolve, config.drainSeconds * 1000));
      // Newest first: the listeners (in-flight requests finish), then the queued charges and usage rows are written,
      // the spans of the last requests go out, and the connections and storage close.
      await opened.closeAll();
    })();
    return closing;
  };
  return { apiUrl, consoleUrl, metricsUrl: metricsListener?.url ?? null, services, generatedAdminToken: admin.generated, batches, close };
}

/** The log line an operator reads first: where it listens and which channels it found. */
/**
 * Where operators sign in, for the start log: before the first operator exists, the one-time setup page (the admin
 * token makes the first owner) and the second factor every operator needs before the operator pages answer.
 */
export async function describeOperatorConsole(gateway: RunningGateway): Promise<string> {
  if (await gateway.services.storage.operators.count() > 0) return `${gateway.consoleUrl}/operator (operators sign in with two-factor)`;
  return `no operator yet: create the first owner at ${gateway.consoleUrl}/operator/setup (it asks for ADMIN_TOKEN or the token printed at the first start), then turn on two-factor sign-in on the console's Security page: operator pages require it`;
}

export function describeStartup(gateway: RunningGateway): Record<string, unknown> {
  const { services } = gateway;
  const channels = services.catalog.channels();
  return {
    api: gateway.apiUrl,
    console: gateway.consoleUrl,
    storage: services.storage.dialect,
    limits: services.config.redisUrl === null ? 'in-process' : `redis (${services.config.redisKeyPrefix})`,
    mail: services.mailer.kind === 'smtp' ? 'smtp' : 'log (SMTP_URL not set)',
    metrics: gateway.metricsUrl === null ? undefined : `${gateway.metricsUrl}/metrics`,
    access_log: services.config.telemetry.accessLog ? 'on' : 'off',
    otlp: services.config.telemetry.otlp === null ? 'off (OTEL_EXPORTER_OTLP_ENDPOINT not set)' : `on (${new URL(services.config.telemetry.otlp.tracesUrl).origin})`,
    card_payments: services.commerce.webhook === null ? 'off (STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET not set)' : `stripe (webhook ${gateway.consoleUrl}/api/webhooks/stripe)`,
    channels: channels.map((channel) => ({
      name: channel.name,
      type: channel.type,
      enabled: channel.enabled,
      routable: channel.enabled && services.adapters.supports(channel.type),
      models: services.catalog.servedModelCount(channel),
    })),
    note: channels.length === 0 ? 'no upstream channels yet: model calls answer 503 until one is added (POST /admin/channels, gateway.yaml or OPENAI_API_KEY)' : undefined,
  };
}
