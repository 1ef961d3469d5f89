/**
 * Migrations 0023 and 0024 on both databases, over rows as the release before them stored them: a channel's base URL
 * loses its user name and password (they were stored and shown in clear, and never reached the upstream), and so do
 * the audit log's states; a base URL without them, and other text with an @, stay as they were. Referral rewards
 * paid before get `reversed_nano` 0.
 */
import { type Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/storage/migrate.js';
import type { Database } from '../../src/storage/database-schema.js';
import { migrationProvider } from '../../src/storage/migrations/migration-provider.js';
import { migrationDatabases, postgresAvailable } from './migration-databases.js';

const databases = migrationDatabases();

afterEach(() => databases.cleanup());

async function insertChannel(db: Kysely<Database>, id: string, baseUrl: string | null): Promise<void> {
  await sql`INSERT INTO channels (id, name, type, base_url, api_keys_sealed, models, priority, weight, enabled, headers, settings, created_at, updated_at)
    VALUES (${id}, ${id}, 'openai-compatible', ${baseUrl}, 'sealed', '{}', 0, 1, 1, '{}', '{}', 1000, 1000)`.execute(db);
}

async function checkMigrations(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  expect((await migrator.migrateTo('0019-response-cache')).error).toBeUndefined();
  await insertChannel(db, 'ch_creds', 'https://team:s3cret-pw@llm.internal.example/v1');
  await insertChannel(db, 'ch_user', 'http://onlyuser@10.0.0.5:8000');
  await insertChannel(db, 'ch_plain', 'https://api.example.com/v1?tenant=a@b');
  await insertChannel(db, 'ch_none', null);
  const channelJson = JSON.stringify({ id: 'ch_creds', base_url: 'https://team:s3cret-pw@llm.internal.example/v1', name: 'x', contact: 'ops@example.com' });
  await sql`INSERT INTO operator_audit_log (id, at, operator_id, operator_email, action, target, status, before_json, after_json, ip)
    VALUES ('aud_1', 1000, 'usr_1', 'ops@example.com', 'POST /admin/channels', '/admin/channels/ch_creds', 201, NULL, ${channelJson}, '127.0.0.1')`.execute(db);
  await sql`INSERT INTO accounts (id, email, tier, created_at, updated_at) VALUES ('acct_a', 'a@example.com', 'default', 1, 1), ('acct_b', 'b@example.com', 'default', 1, 1)`.execute(db);
  await sql`INSERT INTO referral_rewards (ledger_entry_id, referrer_account_id, referred_account_id, checkout_session_id, amount_nano, created_at)
    VALUES ('led_referral_cs_1', 'acct_a', 'acct_b', 'cs_1', 5000000000, 1000)`.execute(db);

  await migrateToLatest(db);

  const channels = await db.selectFrom('channels').select(['id', 'base_url']).orderBy('id').execute();
  expect(Object.fromEntries(channels.map((row) => [row.id, row.base_url]))).toEqual({
    ch_creds: 'https://llm.internal.example/v1',
    ch_none: null,
    ch_plain: 'https://api.example.com/v1?tenant=a@b',
    ch_user: 'http://10.0.0.5:8000',
  });
  const audit = await sql<{ after_json: string }>`SELECT after_json FROM operator_audit_log WHERE id = 'aud_1'`.execute(db);
  const after = audit.rows[0]?.after_json ?? '';
  expect(after).not.toContain('s3cret-pw');
  expect(JSON.parse(after)).toEqual({ id: 'ch_creds', base_url: 'https://llm.internal.example/v1', name: 'x', contact: 'ops@example.com' });
  const rewards = await sql<{ reversed_nano: bigint | string | number }>`SELECT reversed_nano FROM referral_rewards`.execute(db);
  expect(rewards.rows.map((row) => String(row.reversed_nano))).toEqual(['0']);
}

describe('migrations 0023 (referral reward reversals) and 0024 (channel URL credentials)', () => {
  it('on SQLite', async () => {
    await checkMigrations(await databases.sqlite());
  });

  it.skipIf(!postgresAvailable)('on PostgreSQL', async () => {
    await checkMigrations(await databases.postgres());
  });
});
