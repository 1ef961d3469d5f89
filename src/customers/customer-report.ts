import { GatewayError } from '../errors/gateway-error.js';
import type { UsageReportJson, UsageReportTotalJson } from '../contract/customers.js';
import { nanoToDecimalString, nanoToUsd } from '../billing/money.js';
import { timeInput } from '../management/time-input.js';
import { csvLine } from '../shared/csv.js';
import type { NanoUsd } from '../domain/records.js';
import type { RollupDimension, RollupQuery, UsageRollup } from '../domain/customer-records.js';

const DAY_MS = 86_400_000;
/** A report spans at most this many days. */
export const MAX_REPORT_DAYS = 400;
const DEFAULT_REPORT_DAYS = 30;

/** The report paths' dimension names and the JSON field each row names its value by. */
export const REPORT_DIMENSIONS: Record<string, { dimension: RollupDimension; field: ReportField }> = {
  customers: { dimension: 'customer', field: 'customer' },
  tags: { dimension: 'tag', field: 'tag' },
  keys: { dimension: 'key', field: 'key_id' },
};

function timeParam(query: URLSearchParams, name: string, fallback: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  const parsed = timeInput.safeParse(/^\d+$/.test(raw) ? Number(raw) : raw);
  if (!parsed.success) throw new GatewayError('bad_request', `'${name}' must be an ISO 8601 time or Unix seconds.`, { param: name });
  return parsed.data;
}

/** A report's query from `from`, `to` (default: the last 30 days) and the optional value filter (`customer`, `tag`, `key_id`). */
export function reportQuery(query: URLSearchParams, path: string, accountId: string | null, now: number): RollupQuery {
  const spec = REPORT_DIMENSIONS[path];
  if (spec === undefined) throw new GatewayError('not_found', `No report named '${path}'; there are customers, tags and keys.`);
  const to = timeParam(query, 'to', now);
  const from = timeParam(query, 'from', to - (DEFAULT_REPORT_DAYS - 1) * DAY_MS);
  if (from > to) throw new GatewayError('bad_request', "'from' must not be after 'to'.", { param: 'from' });
  if (to - from > MAX_REPORT_DAYS * DAY_MS) throw new GatewayError('bad_request', `A report spans at most ${MAX_REPORT_DAYS} days.`, { param: 'from' });
  const value = query.get(spec.field);
  return { accountId, dimension: spec.dimension, from, to, ...(value === null || value === '' ? {} : { value }) };
}

interface Totals {
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  costNano: NanoUsd;
}

/** The field a report row names its value in. */
type ReportField = 'customer' | 'tag' | 'key_id';

function figures(total: Totals): Omit<UsageReportTotalJson, ReportField> {
  return {
    requests: total.requests,
    errors: total.errors,
    input_tokens: total.inputTokens,
    output_tokens: total.outputTokens,
    cost_usd: nanoToUsd(total.costNano),
  };
}

/** Rows per day and value, and each value's totals over the range (dearest first), as the APIs answer. */
export function reportJson(query: RollupQuery, rows: readonly UsageRollup[], withAccount: boolean): UsageReportJson {
  const field = Object.values(REPORT_DIMENSIONS).find((spec) => spec.dimension === query.dimension)?.field ?? 'value';
  const totals = new Map<string, Totals>();
  for (const row of rows) {
    const total = totals.get(row.value) ?? { requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, costNano: 0n };
    total.requests += row.requests;
    total.errors += row.errors;
    total.inputTokens += row.inputTokens;
    total.outputTokens += row.outputTokens;
    total.costNano += row.costNano;
    totals.set(row.value, total);
  }
  const byCost = [...totals].sort(([leftValue, left], [rightValue, right]) => (left.costNano === right.costNano ? (leftValue < rightValue ? -1 : 1) : left.costNano > right.costNano ? -1 : 1));
  return {
    object: 'usage_report',
    dimension: query.dimension,
    from: new Date(Math.floor(query.from / DAY_MS) * DAY_MS).toISOString().slice(0, 10),
    to: new Date(Math.floor(query.to / DAY_MS) * DAY_MS).toISOString().slice(0, 10),
    data: rows.map((row) => ({ date: new Date(row.day).toISOString().slice(0, 10), ...(withAccount ? { account_id: row.accountId } : {}), [field]: row.value, ...figures(row) })),
    totals: byCost.map(([value, total]) => ({ [field]: value, ...figures(total) })),
  };
}

/** The same rows as CSV, with cost as an exact decimal string. */
export function reportCsv(query: RollupQuery, rows: readonly UsageRollup[], withAccount: boolean): string {
  const field = Object.values(REPORT_DIMENSIONS).find((spec) => spec.dimension === query.dimension)?.field ?? 'value';
  const header = ['date', ...(withAccount ? ['account_id'] : []), field, 'requests', 'errors', 'input_tokens', 'output_tokens', 'cost_usd'];
  let text = csvLine(header);
  for (const row of rows) {
    text += csvLine([new Date(row.day).toISOString().slice(0, 10), ...(withAccount ? [row.accountId] : []), row.value, row.requests, row.errors, row.inputTokens, row.outputTokens, nanoToDecimalString(row.costNano)]);
  }
  return text;
}
