import type { UsageLogRow } from '../domain/usage-records.js';

/** A usage row as JSON text: its money fields (nano-USD, bigints) as decimal strings. */
export function encodeUsageRow(row: UsageLogRow): string {
  return JSON.stringify(row, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
}

type EncodedRow = Omit<UsageLogRow, 'costNano' | 'hostedToolCostNano'> & { costNano: unknown; hostedToolCostNano?: unknown };

const isMoney = (value: unknown): value is string => typeof value === 'string' && /^-?\d+$/.test(value);

/** A row `encodeUsageRow` wrote (or a row written before the hosted tool fields); throws on anything else. */
export function decodeUsageRow(text: string): UsageLogRow {
  const { hostedToolCostNano, ...raw } = JSON.parse(text) as EncodedRow;
  if (typeof raw.requestId !== 'string' || !isMoney(raw.costNano) || (hostedToolCostNano !== undefined && !isMoney(hostedToolCostNano))) throw new Error('not a usage-log row');
  return { ...raw, costNano: BigInt(raw.costNano), ...(hostedToolCostNano === undefined ? {} : { hostedToolCostNano: BigInt(hostedToolCostNano) }) };
}
