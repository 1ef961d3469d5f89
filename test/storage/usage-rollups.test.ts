/**
 * The daily rollups on SQLite and (with TEST_DATABASE_URL) PostgreSQL equal the sums over the usage log, to the token
 * and the nano-dollar, whichever path wrote the rows: the usage log's batches (SQLite in slices of several
 * transactions), a money transaction's usage rows and a settlement carrying them. A mixed batch has rows with and
 * without key, customer and tags, without account, on several days around midnight, with error statuses and costs
 * whose sums pass 2^53; a request id already logged (twice in one batch, or a batch retried) counts once; a money
 * transaction that fails after writing rows leaves neither rows nor sums; a lone surrogate in a tag or a customer
 * (a caller's JSON may carry one) neither fails the batch nor sets a rollup apart from the log. Migration 0059 drops SQLite's per-row
 * trigger (its down puts it back) and leaves PostgreSQL's per-statement trigger.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { UsageLogRow } from '../../src/domain/usage-records.js';
import { SecretBox } from '../../src/shared/secret-box.js';
import type { Database } from '../../src/storage/database-schema.js';
import { createPostgresDialect, openSqlite } from '../../src/storage/dialects.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { migrationProvider } from '../../src/storage/migrations/migration-provider.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { Storage } from '../../src/storage/storage.js';
import { createThrowawayPostgresDatabase, isPostgresUrl } from '../support/postgres-test-database.js';
import { makeAccount, makeUsageLog } from './fixtures.js';
import { migrationDatabases, postgresAvailable } from './migration-databases.js';

const DAY = 86_400_000;
const MIDNIGHT = 1_800_057_600_000;

/** A mixed batch: `prefix` keeps request ids apart between batches. */
function mixedBatch(prefix: string, accounts: readonly string[]): UsageLogRow[] {
  const [a = '', b = ''] = accounts;
  return [
    makeUsageLog({ requestId: `${prefix}-1`, accountId: a, keyId: 'key_a1', customer: 'acme', tags: { team: 'search', env: 'prod' }, createdAt: MIDNIGHT - 1 }),
    makeUsageLog({ requestId: `${prefix}-2`, accountId: a, keyId: 'key_a1', status: 500, errorCode: 'upstream_error', promptTokens: 0, completionTokens: 0, costNano: 0n, createdAt: MIDNIGHT }),
    makeUsageLog({ requestId: `${prefix}-3`, accountId: a, keyId: null, customer: 'globex\udc00', tags: { team: 'ads', odd: 'x\ud800y' }, status: 429, createdAt: MIDNIGHT + DAY + 5 }),
    makeUsageLog({ requestId: `${prefix}-4`, accountId: b, keyId: 'key_b1', customer: 'acme', tags: { 'a=b': 'c', a: 'b=c', 'é': 'ü' }, costNano: 1_000_000_000_000_000_000n, createdAt: MIDNIGHT + 7 }),
    makeUsageLog({ requestId: `${prefix}-5`, accountId: b, keyId: 'key_b1', customer: 'acme', tags: {}, costNano: 1_000_000_000_000_000_001n, promptTokens: 2_147_483_647, createdAt: MIDNIGHT + 9 }),
    makeUsageLog({ requestId: `${prefix}-6`, accountId: null, keyId: 'key_none', customer: 'nobody', tags: { team: 'x' }, status: 401, createdAt: MIDNIGHT }),
    makeUsageLog({ requestId: `${prefix}-7`, accountId: a, keyId: 'key_a2', customer: null, tags: null, status: 400, createdAt: MIDNIGHT - DAY }),
    // Logged already, earlier in this very batch: skipped, counted once.
    makeUsageLog({ requestId: `${prefix}-1`, accountId: a, keyId: 'key_a1', customer: 'acme', costNano: 999n, createdAt: MIDNIGHT - 1 }),
  ];
}

type Row = Record<string, string>;

/** Every rollup, and the same figures recomputed from the usage log, as sorted text rows. */
async function rollupsAndRecomputed(db: Kysely<Database>, postgres: boolean): Promise<{ stored: Row[]; recomputed: Row[] }> {
  const tags = postgres
    ? sql`from "usage_logs" cross join lateral jsonb_each_text("usage_logs"."tags"::jsonb) as "tag"`
    : sql`from "usage_logs", json_each("usage_logs"."tags") as "tag"`;
  const figures = sql`"status", "prompt_tokens", "completion_tokens", "cost_nano"`;
  const day = sql`("created_at" / ${sql.lit(DAY)}) * ${sql.lit(DAY)}`;
  const recomputed = await sql<Row>`select "account_id", "dimension", "day", "value", count(*) as "requests",
      sum(case when "status" >= 400 then 1 else 0 end) as "errors", sum("prompt_tokens") as "input_tokens",
      sum("completion_tokens") as "output_tokens", sum("cost_nano") as "cost_nano"
    from (
      select "account_id", 'key' as "dimension", ${day} as "day", "key_id" as "value", ${figures} from "usage_logs" where "account_id" is not null and "key_id" is not null
      union all
      select "account_id", 'customer', ${day}, "customer", ${figures} from "usage_logs" where "account_id" is not null and "customer" is not null
      union all
      select "account_id", 'tag', ${day}, "tag"."key" || '=' || "tag"."value", ${figures} ${tags} where "account_id" is not null and "tags" is not null
    ) as "rows" group by "account_id", "dimension", "day", "value"`.execute(db);
  const stored = await sql<Row>`select "account_id", "dimension", "day", "value", "requests", "errors", "input_tokens", "output_tokens", "cost_nano" from "usage_rollups"`.execute(db);
  const text = (rows: Row[]) => rows.map((row) => Object.fromEntries(Object.entries(row).map(([name, value]) => [name, String(value)])))
    .sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
  return { stored: text(stored.rows), recomputed: text(recomputed.rows) };
}

interface Opened {
  url: string;
  postgres: boolean;
  /** A second connection for the checks, opened after the storage migrated the database. */
  reader: () => Kysely<Database>;
  cleanup: () => Promise<void>;
}

function describeRollups(name: string, open: () => Promise<Opened>): void {
  describe(name, () => {
    let opened: Opened;
    let storage: Storage;
    let db: Kysely<Database>;
    const accounts: string[] = [];

    beforeAll(async () => {
      opened = await open();
      storage = await openStorage({ url: opened.url, secretBox: new SecretBox(randomBytes(32)) });
      db = opened.reader();
      for (let index = 0; index < 2; index += 1) {
        const account = makeAccount();
        await storage.accounts.create(account);
        accounts.push(account.id);
      }
    });

    afterAll(async () => {
      await storage.close();
      await db.destroy();
      await opened.cleanup();
    });

    const expectExact = async () => {
      const { stored, recomputed } = await rollupsAndRecomputed(db, opened.postgres);
      expect(stored).toEqual(recomputed);
      return stored;
    };

    it('the usage log batches: a mixed batch, the batch retried, and a batch of many slices', async () => {
      await storage.usage.insertBatch(mixedBatch('log', accounts));
      const first = await expectExact();
      const customerA = first.find((row) => row.dimension === 'customer' && row.value === 'acme' && row.account_id === accounts[0]);
      expect(customerA).toMatchObject({ requests: '1', cost_nano: '123456' });
      const bigCost = first.find((row) => row.dimension === 'customer' && row.value === 'acme' && row.account_id === accounts[1]);
      expect(bigCost).toMatchObject({ requests: '2', input_tokens: String(12 + 2_147_483_647), cost_nano: '2000000000000000001' });
      expect(first.filter((row) => row.value === 'key_none' || row.value === 'nobody')).toEqual([]);
      // Two tags of one row reading the same `name=value` count the row twice there, as the sums over the log do.
      expect(first.filter((row) => row.dimension === 'tag' && row.account_id === accounts[1]).map((row) => [row.value, row.requests])).toEqual([['a=b=c', '2'], ['é=ü', '1']]);

      await storage.usage.insertBatch(mixedBatch('log', accounts));
      expect(await expectExact()).toEqual(first);

      const many = Array.from({ length: 3000 }, (_, index) => makeUsageLog({
        requestId: `many-${index}`, accountId: accounts[index % 2] ?? null, keyId: `key_${index % 3}`, customer: index % 5 === 0 ? null : `c${index % 4}`,
        tags: index % 7 === 0 ? null : { shard: String(index % 2) }, status: index % 11 === 0 ? 503 : 200, costNano: BigInt(index) * 1_000_003n,
        createdAt: MIDNIGHT + (index % 3) * DAY - 1,
      }));
      await storage.usage.insertBatch(many);
      await expectExact();
    });

    it('a money transaction\'s usage rows and a settlement carrying them; a failed transaction writes neither rows nor sums', async () => {
      const [a = ''] = accounts;
      await storage.money.transact(accounts, (transaction) => transaction.insertUsageRows(mixedBatch('money', accounts)));
      await storage.money.transact(accounts, (transaction) => transaction.write('instance-rollups', {
        rollovers: [], usages: [], holds: [], usageRows: [...mixedBatch('settle', accounts), ...mixedBatch('money', accounts)], now: MIDNIGHT,
      }));
      const before = await expectExact();

      const failed = new Error('refused after the rows');
      await expect(storage.money.transact([a], async (transaction) => {
        await transaction.insertUsageRows(mixedBatch('failed', accounts));
        throw failed;
      })).rejects.toBe(failed);
      expect(await expectExact()).toEqual(before);
      expect((await storage.usage.query({ accountId: a }, { limit: 1000 })).data.some((row) => row.requestId.startsWith('failed-'))).toBe(false);
    });
  });
}

const directories: string[] = [];
afterAll(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

describeRollups('SQLite: usage rollups per write batch', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-rollups-'));
  directories.push(directory);
  const path = join(directory, 'gateway.db');
  return { url: `sqlite:${path}`, postgres: false, reader: () => new Kysely<Database>({ dialect: openSqlite(path).dialect }), cleanup: async () => {} };
});

const adminUrl = process.env.TEST_DATABASE_URL;
if (isPostgresUrl(adminUrl)) {
  describeRollups('PostgreSQL: usage rollups per insert statement', async () => {
    const database = await createThrowawayPostgresDatabase(adminUrl);
    return { url: database.url, postgres: true, reader: () => new Kysely<Database>({ dialect: createPostgresDialect(database.url) }), cleanup: () => database.drop() };
  });
}

const migrations = migrationDatabases();
afterEach(() => migrations.cleanup());

async function rollupTriggers(db: Kysely<Database>, postgres: boolean): Promise<string[]> {
  const rows = postgres
    ? await sql<{ name: string }>`select tgname as name from pg_trigger where tgrelid = 'usage_logs'::regclass and not tgisinternal`.execute(db)
    : await sql<{ name: string }>`select name from sqlite_master where type = 'trigger' and tbl_name = 'usage_logs'`.execute(db);
  return rows.rows.map((row) => row.name).filter((name) => name === 'usage_logs_rollup');
}

async function checkMigration(db: Kysely<Database>, postgres: boolean): Promise<void> {
  await migrateToLatest(db);
  expect(await rollupTriggers(db, postgres)).toEqual(postgres ? ['usage_logs_rollup'] : []);
  const down = await new Migrator({ db, provider: migrationProvider }).migrateTo('0058-guardrail-account-overrides');
  expect(down.error).toBeUndefined();
  expect(await rollupTriggers(db, postgres)).toEqual(['usage_logs_rollup']);
  await migrateToLatest(db);
  expect(await rollupTriggers(db, postgres)).toEqual(postgres ? ['usage_logs_rollup'] : []);
}

describe('migration 0059 (SQLite sums rollups per write batch)', () => {
  it('on SQLite', async () => {
    await checkMigration(await migrations.sqlite(), false);
  });

  it.skipIf(!postgresAvailable)('on PostgreSQL', async () => {
    await checkMigration(await migrations.postgres(), true);
  });
});
