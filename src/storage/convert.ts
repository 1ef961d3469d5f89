/**
 * Value conversions at the repository boundary: database values → record fields (counts and times as `number`,
 * money as `bigint`, 0/1 as boolean, JSON text as lists and maps) and back. Corrupt values throw instead of
 * leaking wrong types into the gateway.
 */

/** A count or epoch-ms time from the driver (bigint on SQLite, number or bigint on PostgreSQL). */
export function toNumber(value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'bigint' && value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)) {
    return Number(value);
  }
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return toNumber(BigInt(value));
  throw new TypeError(`Storage: expected a safe integer, got ${describe(value)}`);
}

export function toNullableNumber(value: unknown): number | null {
  return value === null ? null : toNumber(value);
}

/** Nano-USD from the driver: bigint, or a decimal string (PostgreSQL `numeric`, e.g. from `sum`). */
export function toBigInt(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw new TypeError(`Storage: expected an integer amount, got ${describe(value)}`);
}

export function toNullableBigInt(value: unknown): bigint | null {
  return value === null ? null : toBigInt(value);
}

export function toBoolean(value: unknown): boolean {
  return toNumber(value) !== 0;
}

export function fromBoolean(value: boolean): number {
  return value ? 1 : 0;
}

/** Narrows a stored string to one of a closed set of values. */
export function toOneOf<const T extends string>(value: string, allowed: readonly T[], what: string): T {
  const match = allowed.find((candidate) => candidate === value);
  if (match === undefined) throw new TypeError(`Storage: unknown ${what} "${value}"`);
  return match;
}

export function toJson(value: unknown): string {
  return JSON.stringify(value);
}

export function toNullableJson(value: unknown): string | null {
  return value === null ? null : JSON.stringify(value);
}

export function parseStringArray(text: string, what: string): string[] {
  const value: unknown = JSON.parse(text);
  if (Array.isArray(value) && value.every((item): item is string => typeof item === 'string')) return value;
  throw new TypeError(`Storage: ${what} is not a JSON array of strings`);
}

export function parseNullableStringArray(text: string | null, what: string): string[] | null {
  return text === null ? null : parseStringArray(text, what);
}

export function parseObject(text: string, what: string): Record<string, unknown> {
  const value: unknown = JSON.parse(text);
  if (isPlainObject(value)) return value;
  throw new TypeError(`Storage: ${what} is not a JSON object`);
}

export function parseStringRecord(text: string, what: string): Record<string, string> {
  const value = parseObject(text, what);
  const result: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') throw new TypeError(`Storage: ${what}.${key} is not a string`);
    result[key] = item;
  }
  return result;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  return typeof value === 'string' ? `"${value.slice(0, 40)}"` : `${typeof value} ${String(value)}`;
}
