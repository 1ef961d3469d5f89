import { CompiledQuery } from 'kysely';

/** PostgreSQL element type of the array a column's values travel in. */
export type ArrayElementType = 'text' | 'int4' | 'int8';

/** Every column of a row with the array type its values travel in: a column left out does not type-check. */
export type ArrayColumns<Row> = { readonly [Column in keyof Row & string]-?: ArrayElementType };

/**
 * A multi-row PostgreSQL insert whose text is the same for any number of rows, one array parameter per column:
 * `insert into "t" ("a", "b") select * from unnest($1::text[], $2::int8[]) <tail>`. node-postgres writes each array
 * as a literal: null and undefined as NULL, bigint as its exact decimal digits. The rows go in in array order.
 */
export function unnestInsert<Row>(table: string, columns: ArrayColumns<Row>, tail: string): (rows: readonly Row[]) => CompiledQuery {
  const names = Object.keys(columns) as Array<keyof Row & string>;
  const arrays = names.map((name, index) => `$${index + 1}::${columns[name]}[]`);
  const text = `insert into "${table}" (${names.map((name) => `"${name}"`).join(', ')}) select * from unnest(${arrays.join(', ')}) ${tail}`;
  return (rows) => CompiledQuery.raw(text, names.map((name) => rows.map((row) => row[name] ?? null)));
}
