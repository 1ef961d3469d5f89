/**
 * The `default` of a switch the compiler proves exhaustive: `value` is `never` there, so a new case added to the
 * union fails the build at every switch that does not answer it. Thrown only if a value arrives that the types deny.
 */
export function unreachable(value: never, what: string): never {
  throw new Error(`unknown ${what} ${String(value)}`);
}
