import { CompiledQuery } from 'kysely';

/** PostgreSQL element type of the array a column's values travel in. */
export type ArrayElementType = 'text' | 'int4' | 'int8';

/**
 * Every column of a row with the array type its values travel in: a column left out does not type-check. Also the
 * table's column list for statements that bind row by row (SQLite), which read only the names.
 */
export type ArrayColumns<Row> = { readonly [Column in keyof Row & string]-?: ArrayElementType };

/** The column names of `columns`, in their order. */
export function columnNames<Row>(columns: ArrayColumns<Row>): Array<keyof Row & string> {
  return Object.keys(columns) as Array<keyof Row & string>;
}

/**
 * `{1,NULL,-3}`: integers (number or bigint, bigint written with all its digits), null and undefined as NULL.
 * Anything else throws: its text could add elements to the literal.
 */
export function integerArray(values: readonly unknown[]): string {
  let literal = '{';
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index];
    if (index > 0) literal += ',';
    if (value === null || value === undefined) literal += 'NULL';
    else if (typeof value === 'bigint' || (typeof value === 'number' && Number.isSafeInteger(value))) literal += String(value);
    else throw new TypeError(`Storage: expected an integer array element, got ${typeof value}`);
  }
  return `${literal}}`;
}

const QUOTED_SPECIALS = /["\\]/;

/** `{"a","say \"hi\"",NULL}`: every string double-quoted (so "NULL", commas and braces stay text), null and undefined as NULL. */
export function textArray(values: readonly unknown[]): string {
  let literal = '{';
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index];
    if (index > 0) literal += ',';
    if (value === null || value === undefined) literal += 'NULL';
    else if (typeof value === 'string') literal += `"${QUOTED_SPECIALS.test(value) ? value.replace(/["\\]/g, '\\$&') : value}"`;
    else throw new TypeError(`Storage: expected a text array element, got ${typeof value}`);
  }
  return `${literal}}`;
}

function arrayLiteral(type: ArrayElementType, values: readonly unknown[]): string {
  return type === 'text' ? textArray(values) : integerArray(values);
}

/**
 * A multi-row PostgreSQL insert whose text is the same for any number of rows, one array parameter per column:
 * `insert into "t" ("a", "b") select * from unnest($1::text[], $2::int8[]) <tail>`. The rows go in in array order.
 */
export function unnestInsert<Row>(table: string, columns: ArrayColumns<Row>, tail: string): (rows: readonly Row[]) => CompiledQuery {
  const names = columnNames(columns);
  const arrays = names.map((name, index) => `$${index + 1}::${columns[name]}[]`);
  const text = `insert into "${table}" (${names.map((name) => `"${name}"`).join(', ')}) select * from unnest(${arrays.join(', ')}) ${tail}`;
  return (rows) => CompiledQuery.raw(text, names.map((name) => arrayLiteral(columns[name], rows.map((row) => row[name]))));
}
