import { z } from 'zod';

/**
 * The largest RPM, TPM or concurrency limit accepted (2^53 - 1, the largest exact JSON integer; the columns are
 * 64-bit on both databases). Leave the limit unset (null) for "unlimited".
 */
export const MAX_LIMIT_VALUE = Number.MAX_SAFE_INTEGER;

/** A throughput limit on input; null (or absent on create) means unlimited. */
export const limitInput = z.number().int().positive().max(MAX_LIMIT_VALUE).nullable().optional();
