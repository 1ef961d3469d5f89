import type { Insertable, Selectable, Updateable } from 'kysely';
import { fromBoolean, toBigInt, toBoolean, toNullableBigInt, toNullableNumber, toNumber, toOneOf } from '../convert.js';

/** How a field's value is read from its column and written back (as it is, when `write` is absent). */
export interface Conversion<Value> {
  read(stored: never): Value;
  write?(value: Value): unknown;
}

function asStored<Value>(): Conversion<Value> {
  return { read: (stored: Value) => stored };
}

export const text = asStored<string>();
export const nullableText = asStored<string | null>();
export const integer: Conversion<number> = { read: toNumber };
export const nullableInteger: Conversion<number | null> = { read: toNullableNumber };
export const money: Conversion<bigint> = { read: toBigInt };
export const nullableMoney: Conversion<bigint | null> = { read: toNullableBigInt };
/** Stored as 0 or 1. */
export const flag: Conversion<boolean> = { read: toBoolean, write: fromBoolean };

/** A string column that holds one of a closed set of values (a stored value outside it throws). */
export function oneOf<const Value extends string>(allowed: readonly Value[], what: string): Conversion<Value> {
  return { read: (stored: string) => toOneOf(stored, allowed, what) };
}

/** `passwordHash` → `password_hash`: the column a record field is stored in. */
type SnakeCase<Name extends string> = Name extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : Name;

/**
 * Every field of a record with its conversion; each is stored in the column its name in snake case names (a field
 * with no such column does not compile).
 */
export type RecordColumns<Row, Entity> = {
  [Field in keyof Entity & string]-?: SnakeCase<Field> extends keyof Row ? Conversion<Entity[Field]> : never;
};

/** The fields a patch may change (every one the patch type names, and only those). */
export type PatchableFields<Entity, Patch> = { [Field in keyof Patch & keyof Entity & string]-?: true };

export interface RecordMapping<Row, Entity, Patch> {
  toRecord(row: Selectable<Row>): Entity;
  toRow(entity: Entity): Insertable<Row>;
  /** `updated_at` set to `now`, and the column of each patchable field the patch gives a value. */
  toChanges(patch: Patch, now: number): Updateable<Row>;
}

interface ColumnOf {
  field: string;
  column: string;
  read: (stored: unknown) => unknown;
  write: ((value: unknown) => unknown) | undefined;
}

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/**
 * A record's row mappings (record from row, row from record, the changes of a patch) from one list of its fields: the
 * field, its column and conversion are written once instead of once per mapping.
 */
export function recordMapping<Row, Entity, Patch = never>(
  fields: RecordColumns<Row, Entity>,
  patchable?: PatchableFields<Entity, Patch>,
): RecordMapping<Row, Entity, Patch> {
  const columns: ColumnOf[] = Object.entries(fields as Record<string, Conversion<unknown>>).map(([field, conversion]) => ({
    field,
    column: snakeCase(field),
    read: conversion.read as (stored: unknown) => unknown,
    write: conversion.write,
  }));
  const changeable = columns.filter((column) => patchable !== undefined && Object.hasOwn(patchable, column.field));
  const stored = (column: ColumnOf, value: unknown): unknown => column.write === undefined ? value : column.write(value);
  return {
    toRecord(row) {
      const values = row as Record<string, unknown>;
      const record: Record<string, unknown> = {};
      for (const column of columns) record[column.field] = column.read(values[column.column]);
      return record as Entity;
    },

    toRow(entity) {
      const values = entity as Record<string, unknown>;
      const row: Record<string, unknown> = {};
      for (const column of columns) row[column.column] = stored(column, values[column.field]);
      return row as Insertable<Row>;
    },

    toChanges(patch, now) {
      const values = patch as Record<string, unknown>;
      const changes: Record<string, unknown> = { updated_at: now };
      for (const column of changeable) {
        const value = values[column.field];
        if (value !== undefined) changes[column.column] = stored(column, value);
      }
      return changes as Updateable<Row>;
    },
  };
}
