import type { Page, PageRequest } from '../domain/records.js';

/**
 * Upper bound on bound parameters per statement. The bundled SQLite allows 32766 and PostgreSQL 65535; staying
 * well below keeps statements small while batches of hundreds of rows still take only a few statements.
 */
export const MAX_PARAMETERS_PER_STATEMENT = 5000;

/** Rows per multi-row statement for a table with `columns` bound values per row. */
export function rowsPerStatement(columns: number): number {
  return Math.max(1, Math.floor(MAX_PARAMETERS_PER_STATEMENT / columns));
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/** The page size asked for, validated (a positive integer). */
export function pageLimit(page: PageRequest): number {
  if (!Number.isSafeInteger(page.limit) || page.limit < 1) {
    throw new RangeError(`Page limit must be a positive integer, got ${String(page.limit)}`);
  }
  return page.limit;
}

/**
 * Turns `limit + 1` fetched rows into a page: the extra row only signals that more exist, and the cursor is the
 * last returned row's.
 */
export function toPage<T>(rows: T[], limit: number, cursorOf: (item: T) => string): Page<T> {
  if (rows.length <= limit) return { data: rows, nextCursor: null };
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, nextCursor: last === undefined ? null : cursorOf(last) };
}
