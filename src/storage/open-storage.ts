import { createGuardrailRepository } from './repositories/guardrail-repository.js';
import type { GuardrailTables } from './guardrail-schema.js';
import { createWebhookRepository } from './repositories/webhook-repository.js';
import { createMcpServerRepository } from './repositories/mcp-server-repository.js';
import { createMcpPolicyRepository } from './repositories/mcp-policy-repository.js';
import type { McpTables } from './mcp-schema.js';
import type { McpSessionTables } from './mcp-session-schema.js';
import { createMcpSessionRepository } from './repositories/mcp-session-repository.js';
import type { WebhookTables } from './webhook-schema.js';
import { createProjectRepository } from './repositories/project-repository.js';
import type { ProjectTables } from './project-schema.js';
import type { BatchTables, ProviderBatchTables } from './batch-schema.js';
import { createBatchRepository } from './repositories/batch-repository.js';
import { createProviderBatchRepository } from './repositories/provider-batch-repository.js';
import { createFileRepository, databaseFileStore } from './repositories/file-repository.js';
import { createFileUploadRepository } from './repositories/file-upload-repository.js';
import { createCustomerRepository } from './repositories/customer-repository.js';
import type { CustomerTables } from './customer-schema.js';
import { createSsoRepository } from './repositories/sso-repository.js';
import { createScimRepository } from './repositories/scim-repository.js';
import type { SsoTables } from './sso-schema.js';
import { Kysely, sql } from 'kysely';
import type { SecretBox } from '../shared/secret-box.js';
import type { Database } from './database-schema.js';
import { createPostgresDialect, openSqlite, type SqliteBatches, type SqliteHandle, type SqliteWriteObserver } from './dialects.js';
import { migrateToLatest, pendingMigrations, type MigrationOutcome } from './migrate.js';
import { createAlertRepository } from './repositories/alert-repository.js';
import { createRedemptionCodeRepository } from './repositories/redemption-repository.js';
import { createConsoleRepository } from './repositories/console-repository.js';
import { createMemberRepository } from './repositories/member-repository.js';
import { createAccountRepository } from './repositories/account-repository.js';
import { createAnnouncementRepository } from './repositories/announcement-repository.js';
import { createDisplayCurrencyRepository } from './repositories/display-currency-repository.js';
import { createApiKeyRepository } from './repositories/api-key-repository.js';
import { createChannelKeyFlagRepository } from './repositories/channel-key-flag-repository.js';
import { createChannelRepository } from './repositories/channel-repository.js';
import { createFxRepository } from './repositories/fx-repository.js';
import { createLedgerRepository } from './repositories/ledger-repository.js';
import { createMoneyRepository } from './repositories/money-repository.js';
import { createModelRepository } from './repositories/model-repository.js';
import { createPlanRepository } from './repositories/plan-repository.js';
import { createSettingsRepository } from './repositories/settings-repository.js';
import { createSubscriptionRepository } from './repositories/subscription-repository.js';
import { createTierRepository } from './repositories/tier-repository.js';
import { createUsageLogRepository } from './repositories/usage-log-repository.js';
import { createBillingProfileRepository } from './repositories/billing-profile-repository.js';
import { createPlanPurchaseRepository } from './repositories/plan-purchase-repository.js';
import { createInvoiceRepository } from './repositories/invoice-repository.js';
import { createPaymentRepository } from './repositories/payment-repository.js';
import { createReferralRepository } from './repositories/referral-repository.js';
import { createSupportRepository } from './repositories/support-repository.js';
import { createOperatorRepository, type OperatorTables } from './repositories/operator-repository.js';
import { createSignUpCreditRepository, type SignUpCreditTables } from './repositories/sign-up-credit-repository.js';
import type { CommerceTables } from './commerce-schema.js';
import type { Storage } from './storage.js';
import { parseStorageUrl, type StorageLocation } from './storage-url.js';
import { immediateTransaction } from './sqlite-connection.js';
import { startWalCheckpointer } from './wal-checkpointer.js';

/**
 * Synchronous SQLite work in one `begin immediate` transaction, run while Kysely's only connection is held,
 * so no Kysely transaction is open around it. For batch writes whose per-statement promises would cost more than the
 * statements themselves.
 */
function sqliteBatches(db: Kysely<Database>, database: SqliteHandle['database'], observe: SqliteWriteObserver): SqliteBatches {
  return {
    database,
    run: (work) => db.connection().execute(async () => immediateTransaction(database, work)),
    observe,
  };
}

export interface OpenStorageOptions {
  /** `sqlite:<path>` (`sqlite::memory:` too) or `postgres://…` / `postgresql://…`. */
  url: string;
  /** Seals channel API keys at rest. */
  secretBox: SecretBox;
  /**
   * Apply pending migrations (the default). When false the schema must already be current (`unigate migrate` ran
   * before the deploy): pending migrations are an error.
   */
  migrate?: boolean;
  /** SQLite only: told how long each batched write transaction held the event loop. */
  observeWrite?: SqliteWriteObserver;
}

/** The database's schema is older than this build and this start may not migrate it. */
export class PendingMigrationsError extends Error {
  override name = 'PendingMigrationsError';
}

function postgresUrl(location: StorageLocation): string {
  if (location.dialect !== 'postgres') throw new Error('not a PostgreSQL storage URL');
  return location.connectionString;
}

function connect(location: StorageLocation): { db: Kysely<Database>; sqlite: SqliteHandle | null } {
  const sqlite: SqliteHandle | null = location.dialect === 'sqlite' ? openSqlite(location.path) : null;
  return { db: new Kysely<Database>({ dialect: sqlite?.dialect ?? createPostgresDialect(postgresUrl(location)) }), sqlite };
}

/** Connects, brings the schema to this build's latest migration, and disconnects (`unigate migrate`). */
export async function migrateStorage(url: string): Promise<MigrationOutcome> {
  const { db } = connect(parseStorageUrl(url));
  try {
    return await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

/** Connects, migrates the schema to the latest version and returns the repositories. */
export async function openStorage(options: OpenStorageOptions): Promise<Storage> {
  const location = parseStorageUrl(options.url);
  const { db, sqlite } = connect(location);
  try {
    if (options.migrate ?? true) await migrateToLatest(db);
    const pending = await pendingMigrations(db);
    if (pending.length > 0) throw new PendingMigrationsError(`The database schema is not current (pending: ${pending.join(', ')}); run "unigate migrate" first.`);
  } catch (error) {
    await db.destroy();
    throw error;
  }

  const checkpointer = sqlite === null || location.dialect !== 'sqlite' || location.path === ':memory:' ? null : startWalCheckpointer(location.path, sqlite.database);
  const commerce = db.withTables<CommerceTables>();
  const batches = sqlite === null ? null : sqliteBatches(db, sqlite.database, options.observeWrite ?? (() => {}));
  return {
    dialect: location.dialect,
    accounts: createAccountRepository(db, location.dialect),
    keys: createApiKeyRepository(db, location.dialect),
    channels: createChannelRepository(db, options.secretBox),
    models: createModelRepository(db),
    plans: createPlanRepository(db),
    subscriptions: createSubscriptionRepository(db),
    ledger: createLedgerRepository(db, location.dialect),
    usage: createUsageLogRepository(db, batches),
    announcements: createAnnouncementRepository(db),
    displayCurrency: createDisplayCurrencyRepository(db),
    fx: createFxRepository(db),
    settings: createSettingsRepository(db),
    tiers: createTierRepository(db),
    channelKeyFlags: createChannelKeyFlagRepository(db),
    money: createMoneyRepository(db, location.dialect, batches),
    alerts: createAlertRepository(db.withTables<ProjectTables & CustomerTables>()),
    redemptionCodes: createRedemptionCodeRepository(db, location.dialect),
    console: createConsoleRepository(db, options.secretBox),
    members: createMemberRepository(db),

    billingProfiles: createBillingProfileRepository(commerce),
    payments: createPaymentRepository(commerce, location.dialect),
    invoices: createInvoiceRepository(commerce),
    planPurchases: createPlanPurchaseRepository(commerce, location.dialect),
    referrals: createReferralRepository(commerce, location.dialect),
    support: createSupportRepository(commerce),
    async pendingMigrations() {
      return pendingMigrations(db);
    },

    // The console's operators and their audit log (migration 0012).
    operators: createOperatorRepository(db.withTables<OperatorTables>()),
    signUpCredits: createSignUpCreditRepository(db.withTables<SignUpCreditTables>(), location.dialect),
    webhooks: createWebhookRepository(db.withTables<WebhookTables>(), options.secretBox),
    projects: createProjectRepository(db.withTables<ProjectTables>()),
    customers: createCustomerRepository(db.withTables<CustomerTables>()),
    files: createFileRepository(db.withTables<BatchTables>(), location.dialect),
    fileContents: databaseFileStore(db.withTables<BatchTables>()),
    fileUploads: createFileUploadRepository(db.withTables<BatchTables>()),
    batches: createBatchRepository(db.withTables<BatchTables>(), location.dialect),
    providerBatches: createProviderBatchRepository(db.withTables<ProviderBatchTables>()),
    sso: createSsoRepository(db.withTables<SsoTables>(), options.secretBox),
    scim: createScimRepository(db.withTables<SsoTables>()),
    mcpServers: createMcpServerRepository(db.withTables<McpTables>(), options.secretBox),
    mcpPolicies: createMcpPolicyRepository(db.withTables<McpTables>()),
    mcpSessions: createMcpSessionRepository(db.withTables<McpSessionTables>()),
    guardrails: createGuardrailRepository(db.withTables<GuardrailTables>(), options.secretBox),
    async ping() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}
