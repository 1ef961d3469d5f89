import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SqliteConnection, SqliteStatement } from '../sqlite-connection.js';
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import { fromBoolean, toBigInt, toBoolean, toNullableNumber, toNumber } from '../convert.js';
import type { Database, UsageLogsTable } from '../database-schema.js';
import type { SqliteBatches } from '../dialects.js';
import { pageLimit, toPage } from '../pagination.js';
import { columnNames, rowInsertText, unnestInsert, type ArrayColumns } from '../postgres-arrays.js';
import type { GuardrailUsage, McpCallUsage, UsageLogRow } from '../../domain/usage-records.js';
import type { UsageLogRepository } from '../storage.js';
import { decodeUsageCursor, encodeUsageCursor } from '../usage-cursor.js';
import { ROWS_PER_FLUSH, sqliteRollupWriter, UsageRollupSums } from './usage-rollup-sums.js';

const DAY_MS = 86_400_000;
/** Advisory-lock name of usage-log pruning (PostgreSQL): one instance prunes at a time. */
const PRUNE_LOCK = 'unigate:usage-log-retention';

function toRecord(row: Selectable<UsageLogsTable>): UsageLogRow {
  return {
    requestId: row.request_id,
    accountId: row.account_id,
    keyId: row.key_id,
    model: row.model,
    channelId: row.channel_id,
    protocol: row.protocol,
    endpoint: row.endpoint,
    stream: toBoolean(row.stream),
    status: toNumber(row.status),
    errorCode: row.error_code,
    promptTokens: toNumber(row.prompt_tokens),
    completionTokens: toNumber(row.completion_tokens),
    cachedTokens: toNumber(row.cached_tokens),
    reasoningTokens: toNumber(row.reasoning_tokens),
    totalTokens: toNumber(row.total_tokens),
    costNano: toBigInt(row.cost_nano),
    latencyMs: toNumber(row.latency_ms),
    ttfbMs: toNullableNumber(row.ttfb_ms),
    attempts: toNumber(row.attempts),
    createdAt: toNumber(row.created_at),
    ...(row.attempted_channels == null || row.attempted_channels === '' ? {} : { attemptedChannels: row.attempted_channels.split(',') }),
    cacheHit: toBoolean(row.cache_hit),
    ...hostedToolsOf(row),
    ...(row.customer == null ? {} : { customer: row.customer }),
    ...(row.tags == null ? {} : { tags: tagsOf(row.tags) }),
    ...(row.guardrails == null ? {} : { guardrails: guardrailsOf(row.guardrails) }),
    ...(row.mcp_server == null ? {} : { mcp: mcpCallOf(row) }),
  };
}

function mcpCallOf(row: Selectable<UsageLogsTable>): McpCallUsage {
  return {
    server: row.mcp_server ?? '',
    tool: row.mcp_tool ?? '',
    bytesIn: toNullableNumber(row.mcp_bytes_in) ?? 0,
    bytesOut: toNullableNumber(row.mcp_bytes_out) ?? 0,
    ...(row.mcp_payload == null ? {} : { payload: row.mcp_payload }),
  };
}

/** Stored tags: a JSON object of strings (anything else reads as none). */
function tagsOf(text: string): Record<string, string> | null {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
    return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  } catch {
    return null;
  }
}

const GUARDRAIL_OUTCOMES = new Set(['passed', 'logged', 'masked', 'blocked', 'unavailable']);

/** Stored guardrail outcomes: a JSON array of { name, direction, outcome, count } (anything else is left out). */
function guardrailsOf(text: string): GuardrailUsage[] {
  try {
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed)) return [];
    return parsed.filter((entry): entry is GuardrailUsage => typeof entry === 'object' && entry !== null
      && typeof (entry as GuardrailUsage).name === 'string'
      && ((entry as GuardrailUsage).direction === 'input' || (entry as GuardrailUsage).direction === 'output')
      && GUARDRAIL_OUTCOMES.has((entry as GuardrailUsage).outcome)
      && Number.isSafeInteger((entry as GuardrailUsage).count));
  } catch {
    return [];
  }
}

/** The row's hosted tool calls and their cost, left out when it made none. */
function hostedToolsOf(row: Selectable<UsageLogsTable>): Pick<UsageLogRow, 'hostedTools' | 'hostedToolCostNano'> {
  const calls = { webSearch: toNumber(row.web_searches), webFetch: toNumber(row.web_fetches), fileSearch: toNumber(row.file_searches) };
  const cost = toBigInt(row.hosted_tool_cost_nano);
  return {
    ...(calls.webSearch + calls.webFetch + calls.fileSearch === 0 ? {} : { hostedTools: calls }),
    ...(cost === 0n ? {} : { hostedToolCostNano: cost }),
  };
}

/** The largest value of the 32-bit integer columns on PostgreSQL. */
const INTEGER_MAX = 2_147_483_647;
/** Longest model name kept in a row (the caller may have sent any text as a model). */
const MODEL_TEXT_MAX = 256;
/** Longest logged MCP payload (arguments and result) kept in a row. */
const MCP_PAYLOAD_MAX = 16_384;

/** A count as the integer column takes it: rounded, at least 0, at most INTEGER_MAX. */
function storableCount(value: number): number {
  return Number.isFinite(value) ? Math.min(INTEGER_MAX, Math.max(0, Math.round(value))) : 0;
}

/** Text as PostgreSQL takes it (no NUL characters), at most `max` characters. */
function storableText(value: string | null, max = 1000): string | null {
  if (value === null) return null;
  const bounded = value.length > max ? value.slice(0, max) : value;
  return bounded.includes('\u0000') ? bounded.replaceAll('\u0000', '\uFFFD') : bounded;
}

/** A lone UTF-16 surrogate (a caller's JSON may carry one as an escape). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Tags as stored JSON, each lone surrogate as U+FFFD: JSON.stringify would write it as a `\ud800` escape, which
 * PostgreSQL's jsonb refuses (its rollup trigger reads the tags as jsonb, so the whole batch would fail) and SQLite's
 * JSON functions would read as a different text than the tag's.
 */
function storableTags(tags: Readonly<Record<string, string>>): string {
  const text = JSON.stringify(tags);
  return text.includes('\\u') ? JSON.stringify(Object.fromEntries(Object.entries(tags).map(([name, value]) => [wellFormed(name), wellFormed(value)]))) : text;
}

function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd');
}

/**
 * A row every database accepts whatever the request carried: a batch that can never be written would be retried
 * forever and hold back every later row (and the usage flush of the admin API and of shutdown with it).
 */
export function toRow(log: UsageLogRow): Insertable<UsageLogsTable> {
  return {
    request_id: log.requestId,
    account_id: log.accountId,
    key_id: log.keyId,
    model: storableText(log.model, MODEL_TEXT_MAX),
    channel_id: log.channelId,
    protocol: log.protocol,
    endpoint: storableText(log.endpoint) ?? '',
    stream: fromBoolean(log.stream),
    status: storableCount(log.status),
    error_code: storableText(log.errorCode),
    prompt_tokens: storableCount(log.promptTokens),
    completion_tokens: storableCount(log.completionTokens),
    cached_tokens: storableCount(log.cachedTokens),
    reasoning_tokens: storableCount(log.reasoningTokens),
    total_tokens: storableCount(log.totalTokens),
    cost_nano: log.costNano,
    latency_ms: storableCount(log.latencyMs),
    ttfb_ms: log.ttfbMs === null ? null : storableCount(log.ttfbMs),
    attempts: storableCount(log.attempts),
    created_at: log.createdAt,
    attempted_channels: log.attemptedChannels === undefined || log.attemptedChannels.length === 0 ? null : log.attemptedChannels.join(','),
    cache_hit: fromBoolean(log.cacheHit === true),
    web_searches: storableCount(log.hostedTools?.webSearch ?? 0),
    web_fetches: storableCount(log.hostedTools?.webFetch ?? 0),
    file_searches: storableCount(log.hostedTools?.fileSearch ?? 0),
    hosted_tool_cost_nano: log.hostedToolCostNano ?? 0n,
    customer: log.customer ?? null,
    tags: log.tags == null ? null : storableTags(log.tags),
    guardrails: log.guardrails === undefined || log.guardrails.length === 0 ? null : JSON.stringify(log.guardrails),
    mcp_server: storableText(log.mcp?.server ?? null),
    mcp_tool: storableText(log.mcp?.tool ?? null),
    mcp_bytes_in: log.mcp === undefined ? null : storableCount(log.mcp.bytesIn),
    mcp_bytes_out: log.mcp === undefined ? null : storableCount(log.mcp.bytesOut),
    mcp_payload: log.mcp?.payload === undefined ? null : storableText(log.mcp.payload, MCP_PAYLOAD_MAX),
  };
}

/** The table's columns with the PostgreSQL array type their values travel in; SQLite binds them by name, row by row. */
export const USAGE_COLUMNS: ArrayColumns<Insertable<UsageLogsTable>> = {
  request_id: 'text',
  account_id: 'text',
  key_id: 'text',
  model: 'text',
  channel_id: 'text',
  protocol: 'text',
  endpoint: 'text',
  stream: 'int4',
  status: 'int4',
  error_code: 'text',
  prompt_tokens: 'int4',
  completion_tokens: 'int4',
  cached_tokens: 'int4',
  reasoning_tokens: 'int4',
  total_tokens: 'int4',
  cost_nano: 'int8',
  latency_ms: 'int4',
  ttfb_ms: 'int4',
  attempts: 'int4',
  created_at: 'int8',
  attempted_channels: 'text',
  cache_hit: 'int4',
  web_searches: 'int4',
  web_fetches: 'int4',
  file_searches: 'int4',
  hosted_tool_cost_nano: 'int8',
  customer: 'text',
  tags: 'text',
  guardrails: 'text',
  mcp_server: 'text',
  mcp_tool: 'text',
  mcp_bytes_in: 'int8',
  mcp_bytes_out: 'int8',
  mcp_payload: 'text',
};

export const USAGE_COLUMN_NAMES = columnNames(USAGE_COLUMNS);

/** What SQLite binds a row's values as. */
export type UsageRowValue = string | number | bigint | null;

/**
 * A row's values in USAGE_COLUMNS order, for the prepared single-row insert: read field by field, without a list of
 * names mapped per row (SQLite inserts rows one at a time, so this runs once per request).
 */
export function usageRowValues(row: Insertable<UsageLogsTable>): UsageRowValue[] {
  return [
    row.request_id ?? null, row.account_id ?? null, row.key_id ?? null, row.model ?? null, row.channel_id ?? null, row.protocol ?? null, row.endpoint ?? null,
    row.stream ?? null, row.status ?? null, row.error_code ?? null, row.prompt_tokens ?? null, row.completion_tokens ?? null, row.cached_tokens ?? null, row.reasoning_tokens ?? null,
    row.total_tokens ?? null, row.cost_nano ?? null, row.latency_ms ?? null, row.ttfb_ms ?? null, row.attempts ?? null, row.created_at ?? null, row.attempted_channels ?? null,
    row.cache_hit ?? null, row.web_searches ?? null, row.web_fetches ?? null, row.file_searches ?? null, row.hosted_tool_cost_nano ?? null,
    row.customer ?? null, row.tags ?? null, row.guardrails ?? null, row.mcp_server ?? null, row.mcp_tool ?? null, row.mcp_bytes_in ?? null,
    row.mcp_bytes_out ?? null, row.mcp_payload ?? null,
  ];
}

/** One row's insert, the same text for every row, so SQLite prepares it once and reuses it. */
const SQLITE_ROW_INSERT = rowInsertText('usage_logs', USAGE_COLUMNS, 'on conflict ("request_id") do nothing');

/** Inserts usage rows on one SQLite connection, with their rollup sums (usage-rollup-sums.ts). */
export type SqliteUsageRows = (rows: Iterable<Insertable<UsageLogsTable>>) => void;

/**
 * Every usage row SQLite stores goes in through here: each row the iterable yields is inserted (a request id already
 * logged is skipped), and the inserted rows' sums are added to `usage_rollups`, one upsert per group. Synchronous:
 * call it inside the transaction the rows belong to, so rows and sums commit or roll back together. The statements
 * are prepared on first use and kept for the connection's life.
 */
export function sqliteUsageRows(database: SqliteConnection): SqliteUsageRows {
  let insert: SqliteStatement | null = null;
  const addRollups = sqliteRollupWriter(database);
  return (rows) => {
    const statement = (insert ??= database.prepare(SQLITE_ROW_INSERT));
    let sums = new UsageRollupSums();
    for (const row of rows) {
      if (statement.run(...usageRowValues(row)).changes !== 1n) continue;
      sums.add(row);
      if (sums.rows >= ROWS_PER_FLUSH) {
        addRollups(sums);
        sums = new UsageRollupSums();
      }
    }
    addRollups(sums);
  };
}

/** PostgreSQL: a batch of any size is one insert (one statement is one transaction), its text always the same. */
export const insertUsageLogs = unnestInsert('usage_logs', USAGE_COLUMNS, 'on conflict ("request_id") do nothing');

/**
 * How long one SQLite usage transaction may insert before it commits and lets the event loop run (ms): a batch of
 * hundreds of rows becomes a few transactions of about this length instead of one that stalls every request.
 */
export const SQLITE_USAGE_SLICE_MS = 1;

/** `sqlite`: the SQLite connection (PostgreSQL: null). */
export function createUsageLogRepository(db: Kysely<Database>, sqlite: SqliteBatches | null): UsageLogRepository {
  const insertSqlite = sqlite === null ? null : sqliteUsageRows(sqlite.database);
  return {
    /**
     * A request id already logged is skipped, so a retried batch is harmless. SQLite runs one prepared single-row
     * insert per row, synchronously (about twice as fast per row as a multi-row insert, and half the CPU of the same
     * inserts as one awaited Kysely query each), in slices of SQLITE_USAGE_SLICE_MS, each its own transaction with
     * its rows' rollup sums, with a turn of the event loop between them; a failed slice fails the batch, whose retry
     * skips the rows already written. PostgreSQL takes the whole batch as one statement.
     */
    async insertBatch(rows) {
      if (rows.length === 0) return;
      if (sqlite !== null && insertSqlite !== null) {
        for (let next = 0; next < rows.length;) {
          if (next > 0) await nextTurn();
          const from = next;
          const startedAt = performance.now();
          next = await sqlite.run(() => {
            let index = from;
            insertSqlite(function* slice() {
              do {
                yield toRow(rows[index] as UsageLogRow);
                index += 1;
              } while (index < rows.length && performance.now() - startedAt < SQLITE_USAGE_SLICE_MS);
            }());
            return index;
          });
          sqlite.observe('usage', (performance.now() - startedAt) / 1000, next - from);
        }
        return;
      }
      await db.executeQuery(insertUsageLogs(rows.map(toRow)));
    },

    async query(filter, page) {
      const limit = pageLimit(page);
      let query = db
        .selectFrom('usage_logs')
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('request_id', 'desc')
        .limit(limit + 1);
      if (filter.accountId !== undefined) query = query.where('account_id', '=', filter.accountId);
      if (filter.keyId !== undefined) query = query.where('key_id', '=', filter.keyId);
      if (filter.keyIds !== undefined) query = filter.keyIds.length === 0 ? query.where(sql<boolean>`1 = 0`) : query.where('key_id', 'in', [...filter.keyIds]);
      if (filter.channelId !== undefined) query = query.where('channel_id', '=', filter.channelId);
      if (filter.model !== undefined) query = query.where('model', '=', filter.model);
      if (filter.customer !== undefined) query = query.where('customer', '=', filter.customer);
      if (filter.status !== undefined) query = query.where('status', '=', filter.status);
      if (filter.sessionId !== undefined) {
        // Compared exactly (LIKE would read '_' as a wildcard, and is case-blind on SQLite).
        const responses = `${filter.sessionId}.`;
        const sessionId = filter.sessionId;
        query = query.where((eb) => eb.or([eb('request_id', '=', sessionId), eb(sql<string>`substr(request_id, 1, ${sql.lit(responses.length)})`, '=', responses)]));
      }
      if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
      if (filter.to !== undefined) query = query.where('created_at', '<=', filter.to);
      if (page.after != null) {
        const cursor = decodeUsageCursor(page.after);
        query = query.where((eb) => eb.or([
          eb('created_at', '<', cursor.createdAt),
          eb.and([eb('created_at', '=', cursor.createdAt), eb('request_id', '<', cursor.requestId)]),
        ]));
      }
      const rows = await query.execute();
      return toPage(rows.map(toRecord), limit, (row) => encodeUsageCursor(row));
    },

    async dailyTotals(filter) {
      // Integer division of epoch ms by a day's ms is the UTC day on both databases (both columns are bigint).
      const day = sql<number | bigint>`created_at / ${sql.lit(DAY_MS)}`;
      const rows = await db
        .selectFrom('usage_logs')
        .select([
          day.as('day'),
          'model',
          'key_id',
          (eb) => eb.fn.countAll().as('requests'),
          sql<number | bigint | string>`sum(case when status >= 400 then 1 else 0 end)`.as('errors'),
          sql<number | bigint | string>`coalesce(sum(prompt_tokens), 0)`.as('input_tokens'),
          sql<number | bigint | string>`coalesce(sum(completion_tokens), 0)`.as('output_tokens'),
          sql<number | bigint | string>`coalesce(sum(cost_nano), 0)`.as('cost_nano'),
        ])
        .where('account_id', '=', filter.accountId)
        .where('created_at', '>=', filter.from)
        .where('created_at', '<=', filter.to)
        .groupBy([day, 'model', 'key_id'])
        .orderBy(day)
        .orderBy('model')
        .orderBy(sql`coalesce(key_id, '')`)
        .execute();
      return rows.map((row) => ({
        day: toNumber(row.day) * DAY_MS,
        model: row.model,
        keyId: row.key_id,
        requests: toNumber(row.requests),
        errors: toNumber(row.errors),
        inputTokens: toNumber(row.input_tokens),
        outputTokens: toNumber(row.output_tokens),
        costNano: toBigInt(row.cost_nano),
      }));
    },

    async pruneBatch(before, limit) {
      const remove = (executor: Kysely<Database>) => executor
        .deleteFrom('usage_logs')
        .where('request_id', 'in', (eb) => eb
          .selectFrom('usage_logs')
          .select('request_id')
          .where('created_at', '<', before)
          .orderBy('created_at')
          .limit(limit))
        .executeTakeFirst();
      if (sqlite !== null) return Number((await remove(db)).numDeletedRows);
      return db.transaction().execute(async (trx) => {
        const lock = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtext(${PRUNE_LOCK})) as locked`.execute(trx);
        if (lock.rows[0]?.locked !== true) return null;
        return Number((await remove(trx)).numDeletedRows);
      });
    },
  };
}
