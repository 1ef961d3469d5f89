/**
 * When a failed delivery is tried again: the wait after the attempt numbered by the index (1-based attempts; the
 * first attempt is immediate). Eight attempts over about 27 hours, as Standard Webhooks' reference services do.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000,
];

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** Up to this share of a wait is added at random, so endpoints that failed together are not retried together. */
const JITTER_SHARE = 0.2;

/** The wait after failed attempt `attempt`, with jitter; null when it was the last one. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  return base + Math.floor(base * JITTER_SHARE * random());
}
