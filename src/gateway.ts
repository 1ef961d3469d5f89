import type { GatewayConfig } from './config/gateway-config.js';
import type { BatchRunner } from './batches/batch-runner.js';
import { startBackgroundJobs } from './gateway/background-jobs.js';
import { startListeners } from './gateway/listeners.js';
import { openServices, type StartOptions } from './gateway/open-services.js';
import type { GatewayServices } from './services.js';
import { OpenedResources } from './shared/opened-resources.js';

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
  const { services, generatedAdminToken } = await openServices(config, options, opened);
  const batches = startBackgroundJobs(services, opened);
  const listeners = await startListeners(services, opened);
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // Load balancers see /readyz fail and stop sending new requests while this instance still serves them.
      services.readiness.startDraining();
      listeners.startDraining();
      // Local MCP servers still starting are ended now: requests waiting on them fail instead of holding the listeners.
      services.mcpOutbound.stdioProcesses?.loaded()?.drain();
      if (config.drainSeconds > 0) await new Promise((resolve) => setTimeout(resolve, config.drainSeconds * 1000));
      // Newest first: the listeners (in-flight requests finish), then the queued charges and usage rows are written,
      // the spans of the last requests go out, and the connections and storage close.
      await opened.closeAll();
    })();
    return closing;
  };
  return { apiUrl: listeners.apiUrl, consoleUrl: listeners.consoleUrl, metricsUrl: listeners.metricsUrl, services, generatedAdminToken, batches, close };
}

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
