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

/** `{…}` of `values`, null and undefined as NULL, every other value written by `element` (which throws on a wrong type). */
function arrayOf(values: readonly unknown[], element: (value: unknown) => string): string {
  let literal = '{';
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index];
    if (index > 0) literal += ',';
    literal += value === null || value === undefined ? 'NULL' : element(value);
  }
  return `${literal}}`;
}

/** An integer (number or bigint, bigint with all its digits); anything else throws, as its text could add elements. */
function integerElement(value: unknown): string {
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isSafeInteger(value))) return String(value);
  throw new TypeError(`Storage: expected an integer array element, got ${typeof value}`);
}

const QUOTED_SPECIALS = /["\\]/;

/** A string, double-quoted (so "NULL", commas and braces stay text). */
function textElement(value: unknown): string {
  if (typeof value !== 'string') throw new TypeError(`Storage: expected a text array element, got ${typeof value}`);
  return `"${QUOTED_SPECIALS.test(value) ? value.replace(/["\\]/g, '\\$&') : value}"`;
}

/** `{1,NULL,-3}` */
export function integerArray(values: readonly unknown[]): string {
  return arrayOf(values, integerElement);
}

/** `{"a","say \"hi\"",NULL}` */
export function textArray(values: readonly unknown[]): string {
  return arrayOf(values, textElement);
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

/** The same insert for one row bound by position (SQLite, which binds row by row): `insert into "t" ("a", "b") values (?, ?) <tail>`. */
export function rowInsertText<Row>(table: string, columns: ArrayColumns<Row>, tail: string): string {
  const names = columnNames(columns);
  return `insert into "${table}" (${names.map((name) => `"${name}"`).join(', ')}) values (${names.map(() => '?').join(', ')}) ${tail}`;
}
