import { AlertChecker } from '../alerts/alert-checker.js';
import { BatchRunner } from '../batches/batch-runner.js';
import { ProviderBatchRunner } from '../batches/provider-batches/provider-batch-runner.js';
import { ChannelProbes } from '../health/channel-probes.js';
import { batchRoutes } from '../http/routes/batch-endpoints.js';
import { FxRefresher } from '../management/fx-refresher.js';
import { McpHealthSchedule } from '../mcp/mcp-health-schedule.js';
import { chatLinesToAnthropic } from '../operations/batch-line-translation.js';
import { testChannel } from '../relay/channel-test.js';
import { relayDependencies } from '../relay/relay-dependencies.js';
import type { GatewayServices } from '../services.js';
import type { OpenedResources } from '../shared/opened-resources.js';
import { SignUpCreditExpiry } from '../sign-up-credit/sign-up-credit-expiry.js';
import { anthropicBatchApi } from '../upstreams/batch-apis/anthropic-batch-api.js';
import { geminiBatchApi } from '../upstreams/batch-apis/gemini-batch-api.js';
import { openAIBatchApi } from '../upstreams/batch-apis/openai-batch-api.js';
import { UsageRetention } from '../usage-log/usage-retention.js';
import { ChannelHealthEvents } from '../webhooks/channel-events.js';
import { WebhookDeliverer } from '../webhooks/webhook-deliverer.js';
import { WebhookSender } from '../webhooks/webhook-sender.js';

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
 * The loops that run off the request path on every instance (each stopped through `opened`): FX rates, alerts, the
 * sign-up credit's expiry, webhooks, batches, plan renewals, usage retention, channel probes and MCP health checks.
 * Returns the batch runner (idle when BATCH_CONCURRENCY is 0).
 */
export function startBackgroundJobs(services: GatewayServices, opened: OpenedResources): BatchRunner {
  const { config, storage, clock, logger } = services;
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
  return batches;
}
