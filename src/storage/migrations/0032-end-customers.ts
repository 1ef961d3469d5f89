import { PostgresAdapter, sql, type Kysely } from 'kysely';

const DAY_MS = 86_400_000;

/**
 * Spend by end customer and by tag (customer-schema.ts):
 *
 * - `usage_logs.customer`: the end customer the request named (bounded text), `usage_logs.tags`: its tags as a JSON
 *   object of bounded `name: value` strings; both null when the request named none. Never prompt text.
 * - `customer_rules`: an account's budget and RPM for one end customer, or for every customer (`customer` = '', the
 *   default rule). A customer's own rule replaces the default as a whole.
 * - `customer_spend`: what each end customer has spent in the current period of its budget (a stored spend of an
 *   earlier period counts as nothing), kept by the money transactions like a key's budget spend.
 * - `usage_rollups`: requests, errors, tokens and cost per account, UTC day and dimension (`key`, `customer` or `tag`,
 *   a tag as `name=value`), kept by a trigger on every usage row actually inserted (a request id already logged is
 *   skipped, so nothing is counted twice); on SQLite the gateway keeps them instead since 0059 (usage-rollup-sums.ts). Reports read these instead of scanning the usage log; they outlive its
 *   retention. PostgreSQL aggregates each insert statement's rows and upserts them in key order, so concurrent
 *   batches of several instances take the rows' locks in one order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_logs').addColumn('customer', 'text').execute();
  await db.schema.alterTable('usage_logs').addColumn('tags', 'text').execute();
  await db.schema.createIndex('usage_logs_account_customer_index').on('usage_logs').columns(['account_id', 'customer', 'created_at', 'request_id']).execute();

  await db.schema.createTable('customer_rules')
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('customer', 'text', (column) => column.notNull())
    .addColumn('budget_period', 'text')
    .addColumn('budget_limit_nano', 'bigint')
    .addColumn('rpm', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('customer_rules_pk', ['account_id', 'customer'])
    .execute();

  await db.schema.createTable('customer_spend')
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('customer', 'text', (column) => column.notNull())
    .addColumn('period_start', 'bigint', (column) => column.notNull())
    .addColumn('spent_nano', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('customer_spend_pk', ['account_id', 'customer'])
    .execute();

  await db.schema.createTable('usage_rollups')
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('dimension', 'text', (column) => column.notNull())
    .addColumn('day', 'bigint', (column) => column.notNull())
    .addColumn('value', 'text', (column) => column.notNull())
    .addColumn('requests', 'bigint', (column) => column.notNull())
    .addColumn('errors', 'bigint', (column) => column.notNull())
    .addColumn('input_tokens', 'bigint', (column) => column.notNull())
    .addColumn('output_tokens', 'bigint', (column) => column.notNull())
    .addColumn('cost_nano', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('usage_rollups_pk', ['account_id', 'dimension', 'day', 'value'])
    .execute();

  if (isPostgres(db)) await createPostgresTrigger(db);
  else await createSqliteTrigger(db);
}

const ADD_UP_TEXT = `do update set "requests" = "usage_rollups"."requests" + excluded."requests", "errors" = "usage_rollups"."errors" + excluded."errors",
  "input_tokens" = "usage_rollups"."input_tokens" + excluded."input_tokens", "output_tokens" = "usage_rollups"."output_tokens" + excluded."output_tokens",
  "cost_nano" = "usage_rollups"."cost_nano" + excluded."cost_nano"`;
const ADD_UP = sql.raw(ADD_UP_TEXT);

/** SQLite's per-row trigger, until migration 0059 moved its sums into the gateway (its down puts it back). */
export async function createSqliteTrigger(db: Kysely<unknown>): Promise<void> {
  const columns = sql.raw('"account_id", "dimension", "day", "value", "requests", "errors", "input_tokens", "output_tokens", "cost_nano"');
  const figures = sql.raw(`1, NEW."status" >= 400, NEW."prompt_tokens", NEW."completion_tokens", NEW."cost_nano"`);
  const day = sql.raw(`(NEW."created_at" / ${DAY_MS}) * ${DAY_MS}`);
  const conflict = sql.raw('on conflict ("account_id", "dimension", "day", "value")');
  await sql`create trigger "usage_logs_rollup" after insert on "usage_logs" when NEW."account_id" is not null begin
    insert into "usage_rollups" (${columns}) select NEW."account_id", 'key', ${day}, NEW."key_id", ${figures} where NEW."key_id" is not null ${conflict} ${ADD_UP};
    insert into "usage_rollups" (${columns}) select NEW."account_id", 'customer', ${day}, NEW."customer", ${figures} where NEW."customer" is not null ${conflict} ${ADD_UP};
    insert into "usage_rollups" (${columns}) select NEW."account_id", 'tag', ${day}, "tag"."key" || '=' || "tag"."value", ${figures}
      from json_each(NEW."tags") as "tag" where NEW."tags" is not null ${conflict} ${ADD_UP};
  end`.execute(db);
}

async function createPostgresTrigger(db: Kysely<unknown>): Promise<void> {
  await sql.raw(`create function "usage_logs_rollup"() returns trigger language plpgsql as $body$
begin
  insert into "usage_rollups" ("account_id", "dimension", "day", "value", "requests", "errors", "input_tokens", "output_tokens", "cost_nano")
  select "account_id", "dimension", "day", "value", count(*), sum(case when "status" >= 400 then 1 else 0 end), sum("prompt_tokens"), sum("completion_tokens"), sum("cost_nano")
  from (
    select "account_id", 'key' as "dimension", ("created_at" / ${DAY_MS}) * ${DAY_MS} as "day", "key_id" as "value", "status", "prompt_tokens", "completion_tokens", "cost_nano"
      from "inserted" where "account_id" is not null and "key_id" is not null
    union all
    select "account_id", 'customer', ("created_at" / ${DAY_MS}) * ${DAY_MS}, "customer", "status", "prompt_tokens", "completion_tokens", "cost_nano"
      from "inserted" where "account_id" is not null and "customer" is not null
    union all
    select "account_id", 'tag', ("created_at" / ${DAY_MS}) * ${DAY_MS}, "tag"."key" || '=' || "tag"."value", "status", "prompt_tokens", "completion_tokens", "cost_nano"
      from "inserted" cross join lateral jsonb_each_text("inserted"."tags"::jsonb) as "tag" where "account_id" is not null and "tags" is not null
  ) as "rows"
  group by "account_id", "dimension", "day", "value"
  order by "account_id", "dimension", "day", "value"
  on conflict ("account_id", "dimension", "day", "value") ${ADD_UP_TEXT};
  return null;
end
$body$`).execute(db);
  await sql`create trigger "usage_logs_rollup" after insert on "usage_logs" referencing new table as "inserted" for each statement execute function "usage_logs_rollup"()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger if exists "usage_logs_rollup" on "usage_logs"`.execute(db);
    await sql`drop function if exists "usage_logs_rollup"()`.execute(db);
  } else {
    await sql`drop trigger if exists "usage_logs_rollup"`.execute(db);
  }
  await db.schema.dropTable('usage_rollups').execute();
  await db.schema.dropTable('customer_spend').execute();
  await db.schema.dropTable('customer_rules').execute();
  await db.schema.dropIndex('usage_logs_account_customer_index').execute();
  await db.schema.alterTable('usage_logs').dropColumn('tags').execute();
  await db.schema.alterTable('usage_logs').dropColumn('customer').execute();
}

export function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
