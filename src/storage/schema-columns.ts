import type { ColumnType } from 'kysely';

// The column types every table interface is written in.

/** Counts, limits and epoch-millisecond times. */
export type IntegerColumn = ColumnType<number | bigint, number, number>;
export type NullableIntegerColumn = ColumnType<number | bigint | null, number | null, number | null>;
/** Nano-USD, always a 64-bit integer. */
export type MoneyColumn = ColumnType<bigint, bigint, bigint>;
export type NullableMoneyColumn = ColumnType<bigint | null, bigint | null, bigint | null>;
/** 0 or 1. */
export type BooleanColumn = ColumnType<number | bigint, number, number>;
