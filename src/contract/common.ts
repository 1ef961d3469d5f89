import { z } from 'zod';

/** An ISO 8601 time as the server writes it (`new Date(ms).toISOString()`). */
export const isoTime = z.string();

/** A page of a list, as the admin API and the console write them (`next_cursor` asks for the next). */
export function listPageOf<Row extends z.ZodType>(row: Row) {
  return z.strictObject({ object: z.literal('list'), data: z.array(row), has_more: z.boolean(), next_cursor: z.string().nullable() });
}

export type ListPageJson<Row> = { object: 'list'; data: Row[]; has_more: boolean; next_cursor: string | null };
