import { z } from 'zod';

/** Times on input: ISO 8601 strings or Unix seconds. Output is always ISO 8601. */
export const timeInput = z.union([
  z.number().int().nonnegative().transform((seconds) => seconds * 1000),
  z.string().refine((text) => !Number.isNaN(Date.parse(text)), 'must be an ISO 8601 time').transform((text) => Date.parse(text)),
]);

export function isoTime(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
