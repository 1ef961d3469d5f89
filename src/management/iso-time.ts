/** Times on output: always ISO 8601 (null stays null). Kept apart from the input schema so answers need no validation library. */
export function isoTime(ms: number): string;
export function isoTime(ms: number | null): string | null;
export function isoTime(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
