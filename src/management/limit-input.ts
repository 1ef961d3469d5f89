import { z } from 'zod';

/**
 * The largest RPM, TPM or concurrency limit accepted (2,147,483,647: the database column is a 32-bit integer on
 * PostgreSQL). A larger figure would never bind anyway; leave the limit unset (null) for "unlimited".
 */
export const MAX_LIMIT_VALUE = 2_147_483_647;

/** A throughput limit on input; null (or absent on create) means unlimited. */
export const limitInput = z.number().int().positive().max(MAX_LIMIT_VALUE).nullable().optional();
