import { z } from 'zod';

/** The last second of year 9999: later times cannot be written as ISO 8601. */
const MAX_UNIX_SECONDS = 253_402_300_799;

/** Times on input: ISO 8601 strings or Unix seconds (up to year 9999). Output is always ISO 8601. */
export const timeInput = z.union([
  z.number().int().nonnegative().max(MAX_UNIX_SECONDS, 'must be a Unix time no later than year 9999').transform((seconds) => seconds * 1000),
  z.string().refine((text) => !Number.isNaN(Date.parse(text)), 'must be an ISO 8601 time').transform((text) => Date.parse(text)),
]);

export { isoTime } from './iso-time.js';
