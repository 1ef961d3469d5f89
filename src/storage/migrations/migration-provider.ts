import type { Migration, MigrationProvider } from 'kysely/migration';
import * as initial from './0001-initial.js';
import * as accountTiers from './0002-account-tiers.js';
import * as routingHealth from './0003-routing-health.js';
import * as moneyHolds from './0004-money-holds.js';
import * as alertsAndRedemptionCodes from './0005-alerts-and-redemption-codes.js';
import * as consoleAccounts from './0006-console-accounts.js';
import * as accountLifecycleAndKeyBudgets from './0007-account-lifecycle-and-key-budgets.js';
import * as catalogPrices from './0008-catalog-prices.js';
import * as wideLimitColumns from './0009-wide-limit-columns.js';
import * as paymentsInvoicesReferralsSupport from './0010-payments-invoices-referrals-support.js';
import * as consoleInvitations from './0011-console-invitations.js';
import * as consoleOperators from './0012-console-operators.js';
import * as selfServicePlansAndKeyAlerts from './0013-self-service-plans-and-key-alerts.js';
import * as operatorDisabling from './0014-operator-disabling.js';
import * as modelRoutingStrategy from './0016-model-routing-strategy.js';
import * as streamCheckpoints from './0018-stream-checkpoints.js';
import * as responseCache from './0019-response-cache.js';
import * as modelFallbacks from './0017-model-fallbacks.js';
import * as hostedToolPrices from './0020-hosted-tool-prices.js';
import * as referralRewardReversals from './0023-referral-reward-reversals.js';
import * as channelUrlCredentials from './0024-channel-url-credentials.js';
import * as signUpCredit from './0026-sign-up-credit.js';
import * as dismissalsAndDisplayCurrency from './0028-dismissals-and-display-currency.js';
import * as webhooks from './0030-webhooks.js';
import * as endCustomers from './0032-end-customers.js';
import * as projects from './0033-projects.js';
import * as singleSignOn from './0034-single-sign-on.js';
import * as rerankSearchUnits from './0035-rerank-search-units.js';
import * as guardrails from './0036-guardrails.js';
import * as filesAndBatches from './0037-files-and-batches.js';
import * as realtimeAudioPrices from './0038-realtime-audio-prices.js';
import * as mcpServers from './0039-mcp-servers.js';
import * as mcpAccountServers from './0057-mcp-account-servers.js';
import * as customerTokenLimits from './0041-customer-token-limits.js';
import * as guardrailWebhookHeaders from './0043-guardrail-webhook-headers.js';
import * as guardrailsForAccounts from './0044-guardrails-for-accounts.js';
import * as providerBatches from './0045-provider-batches.js';
import * as providerBatchSubmitIntent from './0052-provider-batch-submit-intent.js';
import * as mcpRulesAndMetering from './0047-mcp-rules-and-metering.js';
import * as mcpHealthLatency from './0048-mcp-health-latency.js';
import * as mcpOAuthAndStdio from './0050-mcp-oauth-and-stdio.js';
import * as mcpClientSessions from './0051-mcp-client-sessions.js';
import * as fileUploads from './0053-file-uploads.js';
import * as batchLineProviderPart from './0054-batch-line-provider-part.js';
import * as guardrailAccountOverrides from './0058-guardrail-account-overrides.js';
import * as sqliteRollupsPerBatch from './0059-sqlite-rollups-per-batch.js';

/**
 * Every migration, in code (no directory scanning, so it works from `src/` and `dist/` alike). Kysely runs them in
 * name order; add new ones as `0002-…` and register them here.
 */
const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-account-tiers': accountTiers,
  '0003-routing-health': routingHealth,
  '0004-money-holds': moneyHolds,
  '0005-alerts-and-redemption-codes': alertsAndRedemptionCodes,
  '0006-console-accounts': consoleAccounts,
  '0007-account-lifecycle-and-key-budgets': accountLifecycleAndKeyBudgets,
  '0008-catalog-prices': catalogPrices,
  '0009-wide-limit-columns': wideLimitColumns,
  '0010-payments-invoices-referrals-support': paymentsInvoicesReferralsSupport,
  '0011-console-invitations': consoleInvitations,
  '0012-console-operators': consoleOperators,
  '0013-self-service-plans-and-key-alerts': selfServicePlansAndKeyAlerts,
  '0014-operator-disabling': operatorDisabling,
  '0016-model-routing-strategy': modelRoutingStrategy,
  '0018-stream-checkpoints': streamCheckpoints,
  '0019-response-cache': responseCache,
  '0017-model-fallbacks': modelFallbacks,
  '0020-hosted-tool-prices': hostedToolPrices,
  '0023-referral-reward-reversals': referralRewardReversals,
  '0024-channel-url-credentials': channelUrlCredentials,
  '0026-sign-up-credit': signUpCredit,
  '0028-dismissals-and-display-currency': dismissalsAndDisplayCurrency,
  '0030-webhooks': webhooks,
  '0032-end-customers': endCustomers,
  '0033-projects': projects,
  '0034-single-sign-on': singleSignOn,
  '0035-rerank-search-units': rerankSearchUnits,
  '0036-guardrails': guardrails,
  '0037-files-and-batches': filesAndBatches,
  '0038-realtime-audio-prices': realtimeAudioPrices,
  '0039-mcp-servers': mcpServers,
  '0041-customer-token-limits': customerTokenLimits,
  '0043-guardrail-webhook-headers': guardrailWebhookHeaders,
  '0044-guardrails-for-accounts': guardrailsForAccounts,
  '0045-provider-batches': providerBatches,
  '0047-mcp-rules-and-metering': mcpRulesAndMetering,
  '0048-mcp-health-latency': mcpHealthLatency,
  '0050-mcp-oauth-and-stdio': mcpOAuthAndStdio,
  '0051-mcp-client-sessions': mcpClientSessions,
  '0052-provider-batch-submit-intent': providerBatchSubmitIntent,
  '0053-file-uploads': fileUploads,
  '0054-batch-line-provider-part': batchLineProviderPart,
  '0057-mcp-account-servers': mcpAccountServers,
  '0058-guardrail-account-overrides': guardrailAccountOverrides,
  '0059-sqlite-rollups-per-batch': sqliteRollupsPerBatch,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
