import type { BalancingStrategy } from '../domain/model-records.js';

export type { BalancingStrategy };

/**
 * The balancing strategies: how a model's channels of one priority tier are ordered for a request.
 * - `weighted`: weighted random (each channel's weight is its share of first attempts);
 * - `least-latency`: lowest moving average of time to first byte first (the slower ones keep a small share of
 *   first attempts, so their figure stays current);
 * - `least-in-flight`: fewest attempts in progress in this process, relative to weight.
 */
export const BALANCING_STRATEGIES = ['weighted', 'least-latency', 'least-in-flight'] as const satisfies readonly BalancingStrategy[];

export const DEFAULT_BALANCING_STRATEGY: BalancingStrategy = 'weighted';

export function isBalancingStrategy(value: unknown): value is BalancingStrategy {
  return typeof value === 'string' && (BALANCING_STRATEGIES as readonly string[]).includes(value);
}
