import type { Insertable } from 'kysely';
import type { RollupDimension, UsageRollup } from '../../domain/customer-records.js';
import type { UsageLogsTable } from '../database-schema.js';
import type { SqliteConnection, SqliteStatement } from '../sqlite-connection.js';

/**
 * Where `usage_rollups` is kept: it always equals the sums over the usage rows actually inserted (a request id already
 * logged is skipped, so nothing counts twice), per account, UTC day and dimension (`key`, `customer`, `tag` as
 * `name=value`), whatever path inserted them.
 *
 * - SQLite: in the gateway. Every usage row goes in through `sqliteUsageRows` (usage-log-repository.ts), which sums the rows it
 *   inserted exactly (integers and bigint) and adds each distinct group's sums with one upsert, in the transaction of
 *   the rows. A per-row trigger ran three upserts for every row instead, about half of what a usage row cost.
 * - PostgreSQL: a per-statement trigger over the statement's inserted rows (migration 0032), already one upsert per
 *   group and batch, inside the statement: summing here would add a statement to each batch and change nothing else.
 */
const DAY_MS = 86_400_000;

/**
 * Most rows summed before the sums are written: a count or token figure of a row is at most 2^31 - 1, so numbers stay
 * exact over this many rows (2^22 × 2^31 = 2^53).
 */
export const ROWS_PER_FLUSH = 1 << 22;

const UPSERT_ROLLUP = 'insert into "usage_rollups" ("account_id", "dimension", "day", "value", "requests", "errors", "input_tokens", "output_tokens", "cost_nano") '
  + 'values (?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict ("account_id", "dimension", "day", "value") do update set '
  + '"requests" = "usage_rollups"."requests" + excluded."requests", "errors" = "usage_rollups"."errors" + excluded."errors", '
  + '"input_tokens" = "usage_rollups"."input_tokens" + excluded."input_tokens", "output_tokens" = "usage_rollups"."output_tokens" + excluded."output_tokens", '
  + '"cost_nano" = "usage_rollups"."cost_nano" + excluded."cost_nano"';

/** One group's sums. */
interface RollupSums extends UsageRollup {
  dimension: RollupDimension;
}

/** The sums of a batch of usage rows, one entry per account, dimension, day and value (a row without account counts nowhere). */
export class UsageRollupSums {
  /** Every group, in the order first met. */
  readonly groups: RollupSums[] = [];
  rows = 0;
  /** Per day and dimension, each group by account and value (a day's number is no string to build per row). */
  private readonly byDay = new Map<number, Record<RollupDimension, Map<string, RollupSums>>>();
  /** Each tags text met in the batch, parsed once (a caller's tags repeat from request to request). */
  private readonly tagsByText = new Map<string, string[]>();

  add(row: Insertable<UsageLogsTable>): void {
    const accountId = row.account_id;
    if (accountId == null) return;
    this.rows += 1;
    // The start of the row's UTC day, as integer division truncates it in SQL.
    const day = row.created_at - (row.created_at % DAY_MS);
    let groups = this.byDay.get(day);
    if (groups === undefined) {
      groups = { key: new Map(), customer: new Map(), tag: new Map() };
      this.byDay.set(day, groups);
    }
    const error = (row.status ?? 0) >= 400 ? 1 : 0;
    if (row.key_id != null) this.addTo(groups.key, accountId, 'key', day, row.key_id, row, error);
    if (row.customer != null) this.addTo(groups.customer, accountId, 'customer', day, row.customer, row, error);
    if (row.tags != null) for (const tag of this.tagValues(row.tags)) this.addTo(groups.tag, accountId, 'tag', day, tag, row, error);
  }

  private addTo(groups: Map<string, RollupSums>, accountId: string, dimension: RollupDimension, day: number, value: string, row: Insertable<UsageLogsTable>, error: number): void {
    const id = `${accountId}\u0000${value}`;
    let sums = groups.get(id);
    if (sums === undefined) {
      sums = { accountId, dimension, day, value, requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, costNano: 0n };
      groups.set(id, sums);
      this.groups.push(sums);
    }
    sums.requests += 1;
    sums.errors += error;
    sums.inputTokens += row.prompt_tokens ?? 0;
    sums.outputTokens += row.completion_tokens ?? 0;
    sums.costNano += row.cost_nano;
  }

  private tagValues(text: string): string[] {
    let values = this.tagsByText.get(text);
    if (values === undefined) {
      values = tagValues(text);
      this.tagsByText.set(text, values);
    }
    return values;
  }
}

/** A stored tags object's entries as `name=value` (the rows' tags are a JSON object of strings; anything else counts none). */
function tagValues(text: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return [];
  const values: string[] = [];
  for (const [name, value] of Object.entries(parsed)) if (typeof value === 'string') values.push(`${name}=${value}`);
  return values;
}

/** Adds a batch's sums to `usage_rollups` on a SQLite connection, one upsert per group; prepared on first use and kept. */
export function sqliteRollupWriter(database: SqliteConnection): (sums: UsageRollupSums) => void {
  let upsert: SqliteStatement | null = null;
  return (sums) => {
    const statement = (upsert ??= database.prepare(UPSERT_ROLLUP));
    for (const group of sums.groups) {
      statement.run(group.accountId, group.dimension, group.day, group.value, group.requests, group.errors, group.inputTokens, group.outputTokens, group.costNano);
    }
  };
}
