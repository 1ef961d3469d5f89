/** Nano-dollars in one dollar: the server's money unit; every USD amount it sends is a whole number of them. */
const NANO_PER_USD = 1e9;

/**
 * The sum of two USD amounts the API sent, exact: each is taken back to its whole nano-dollars and those are added as
 * integers (exact below 2^53 nano-dollars, about 9 million USD). Adding the floats instead drifts by a few 1e-18
 * per row, which is enough to round a total that ends in half a micro-dollar the other way from the same total
 * summed elsewhere, so two views of the same requests would show totals $0.000001 apart.
 */
export function addUsd(sum: number, value: number): number {
  return (Math.round(sum * NANO_PER_USD) + Math.round(value * NANO_PER_USD)) / NANO_PER_USD;
}

/** The exact sum of USD amounts the API sent (see addUsd). */
export function sumUsd(values: Iterable<number>): number {
  let nano = 0;
  for (const value of values) nano += Math.round(value * NANO_PER_USD);
  return nano / NANO_PER_USD;
}
