/** A token counter read off a wire usage object: a whole number of tokens, 0 when absent, negative or not a number. */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
