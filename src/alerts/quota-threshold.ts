import type { NanoUsd } from '../domain/records.js';

/**
 * The spend at which a quota alert of `percent` fires: ceil(quota × percent / 100), computed as the storage query
 * computes it (quota = 100a + b → a·percent + ceil(b·percent / 100)) so no intermediate exceeds 64 bits.
 */
export function quotaThresholdNano(quotaNano: NanoUsd, percent: number): NanoUsd {
  if (quotaNano < 0n) throw new RangeError('quota must not be negative');
  if (!Number.isInteger(percent) || percent < 1 || percent > 100) throw new RangeError('percent must be an integer from 1 to 100');
  const share = BigInt(percent);
  return (quotaNano / 100n) * share + ((quotaNano % 100n) * share + 99n) / 100n;
}
