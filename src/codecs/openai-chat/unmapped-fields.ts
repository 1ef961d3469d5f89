import type { JsonObject } from '../../wire/json-object.js';

/**
 * Reports each non-null field of `body` that a decoder does not map (not in `mapped`) in `warnings`, in the body's
 * order, and keeps its value in `keepIn` when given (a chat request's `extensions`).
 */
export function reportUnmappedFields(body: JsonObject, mapped: ReadonlySet<string>, warnings: string[], keepIn?: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(body)) {
    if (mapped.has(name) || value === undefined || value === null) continue;
    if (keepIn !== undefined) keepIn[name] = value;
    warnings.push(`'${name}' is not translated for this model and was ignored.`);
  }
}
