/**
 * The default waits before each retry of a failed delivery, in seconds (the first attempt is immediate): eight
 * attempts over about 27 hours, as Standard Webhooks' reference services do. WEBHOOK_RETRY_SECONDS replaces them.
 */
export const DEFAULT_RETRY_SECONDS: readonly number[] = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];

/** Up to this share of a wait is added at random, so endpoints that failed together are not retried together. */
const JITTER_SHARE = 0.2;

/** The wait after failed attempt `attempt` (1-based), with jitter; null when it was the last one. */
export function retryDelayMs(attempt: number, scheduleSeconds: readonly number[], random: () => number = Math.random): number | null {
  const seconds = scheduleSeconds[attempt - 1];
  if (seconds === undefined) return null;
  const base = seconds * 1000;
  return base + Math.floor(base * JITTER_SHARE * random());
}
