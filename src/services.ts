import type { GuardrailBook } from './guardrail-policies/guardrail-book.js';
import type { AdminTokenVerifier } from './auth/admin-token.js';
import type { ClientIpResolver } from './auth/client-ip.js';
import type { FailedAttemptGuard } from './auth/failed-attempt-guard.js';
import type { KeyVerifier } from './auth/key-verifier.js';
import type { LockoutReport } from './auth/lockout-report.js';
import type { Ledger } from './billing/ledger.js';
import type { SubscriptionBook } from './billing/subscription-book.js';
import type { GatewayConfig } from './config/gateway-config.js';
import type { Readiness } from './health/readiness.js';
import type { Mailer } from './mail/mailer.js';
import type { AccountLifecycle } from './management/account-lifecycle.js';
import type { InvalidationBus } from './invalidation/invalidation-bus.js';
import type { CustomerRuleBook } from './customers/customer-rule-book.js';
import type { RateLimiter } from './limits/rate-limiter.js';
import type { TierBook } from './limits/tier-book.js';
import type { CredentialRotation } from './relay/credential-rotation.js';
import type { LiveStreams } from './relay/live-streams.js';
import type { ResponseCache } from './relay/response-cache/response-cache.js';
import type { GatewayMetrics } from './metrics/gateway-metrics.js';
import type { Catalog } from './routing/catalog.js';
import type { ChannelHealth } from './routing/channel-health.js';
import type { CommerceServices } from './console-billing/commerce-services.js';
import type { Clock } from './shared/clock.js';
import type { Logger } from './shared/logger.js';
import type { Storage } from './storage/storage.js';
import type { Telemetry } from './telemetry/telemetry.js';
import type { AdapterRegistry } from './upstreams/adapter-registry.js';
import type { UsageLogWriter } from './usage-log/usage-log-writer.js';
import type { OutboundPolicy } from './mcp/upstream-session.js';

/** Everything a route needs, built once by the composition root and passed down; no module-level state. */
export interface GatewayServices {
  config: GatewayConfig;
  clock: Clock;
  logger: Logger;
  storage: Storage;
  catalog: Catalog;
  adapters: AdapterRegistry;
  credentials: CredentialRotation;
  /** Circuit breakers per channel and channel-model, fed by relay outcomes. */
  health: ChannelHealth;
  metrics: GatewayMetrics;
  /** The per-request access log, and OpenTelemetry traces and metrics when an OTLP endpoint is configured. */
  telemetry: Telemetry;
  keys: KeyVerifier;
  ledger: Ledger;
  /** Active subscriptions per account (cached briefly), for admission. */
  subscriptions: SubscriptionBook;
  usageLog: UsageLogWriter;
  limiter: RateLimiter;
  /** Per-account limits by tier, in memory. */
  tiers: TierBook;
  /** Drops cached keys, accounts and tiers on every instance after an admin change. */
  invalidation: InvalidationBus;
  adminToken: AdminTokenVerifier;
  clientIp: ClientIpResolver;
  /** Outgoing mail: SMTP (SMTP_URL) or the log. */
  mailer: Mailer;
  /** Card top-ups through Stripe, invoices, referrals and support tickets. */
  commerce: CommerceServices;
  /** Disables, enables and deletes accounts; other parts (console sessions) listen for these changes. */
  accountLifecycle: AccountLifecycle;
  /** When the process started (epoch ms), for /api/status. */
  startedAt: number;
  /** /readyz: dependencies, migrations and draining. */
  readiness: Readiness;
  /** Failed API keys and admin tokens per client IP (shared by every instance on Redis). */
  authFailures: FailedAttemptGuard;
  /** Lockouts in the metrics, the log and the audit log. */
  lockouts: LockoutReport;
  /** Answers of chat requests kept for identical ones (in process, or on Redis when REDIS_URL is set). */
  responseCache: ResponseCache;
  /** Chat streams in flight, ended at once when their key or account changes (on any instance). */
  liveStreams: LiveStreams;
  /** Each account's end-customer rules (budgets, RPM), from memory on the request path. */
  customers: CustomerRuleBook;
  /** The operator's guardrail policies and what they are bound to, from memory on the request path. */
  guardrails: GuardrailBook;
  /** How upstream MCP servers are reached: the address policy, OAuth tokens, and the local stdio servers' processes. */
  mcpOutbound: OutboundPolicy;
}
