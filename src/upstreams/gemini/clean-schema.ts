import { isJsonObject, type JsonObject } from '../../wire/gemini/gemini-wire.js';

/**
 * The keywords of Gemini's `Schema` (an OpenAPI 3.0 subset). The API rejects any other field with
 * `Invalid JSON payload received. Unknown name "additionalProperties" at '…parameters': Cannot find field.`
 */
const KEPT = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);
/** Keywords rewritten rather than dropped. */
const REWRITTEN = new Set(['$ref', 'const', 'anyOf', 'oneOf', 'allOf', '$defs', 'definitions']);
/** Gemini accepts only these formats; e.g. `uri` on a string fails with "only 'enum' and 'date-time' are supported". */
const FORMATS: Readonly<Record<string, ReadonlySet<string>>> = {
  string: new Set(['enum', 'date-time']),
  number: new Set(['float', 'double']),
  integer: new Set(['int32', 'int64']),
};

/** A schema that refers to itself cannot be inlined into Gemini's `Schema`. */
export class RecursiveSchemaError extends Error {
  override name = 'RecursiveSchemaError';
}

export interface CleanedSchema {
  /** Undefined for an object schema without properties, which Gemini rejects ("should be non-empty for OBJECT type"). */
  schema: JsonObject | undefined;
  /** Keywords that were removed, for the caller's warning. */
  removed: string[];
}

interface Context {
  root: JsonObject;
  resolving: Set<string>;
  removed: Set<string>;
}

/**
 * JSON Schema → Gemini `Schema`: local `$ref`s are inlined, `type: [t, "null"]` and `anyOf` with a null branch
 * become `nullable`, `const` becomes a one-value `enum`, `oneOf` becomes `anyOf`, `allOf` is merged, non-string
 * enums are written as Gemini wants them (`format: "enum"`, values as strings), and every keyword outside Gemini's
 * set (`$schema`, `additionalProperties`, `exclusiveMinimum`, `patternProperties`, `if`, …) is removed and reported.
 * Throws RecursiveSchemaError for recursive `$ref`s (the caller then sends `parametersJsonSchema` instead).
 */
export function cleanSchemaForGemini(schema: JsonObject): CleanedSchema {
  const context: Context = { root: schema, resolving: new Set(), removed: new Set() };
  const cleaned = clean(schema, context);
  const empty = cleaned.type === 'object' && (!isJsonObject(cleaned.properties) || Object.keys(cleaned.properties).length === 0);
  return { schema: empty ? undefined : cleaned, removed: [...context.removed].sort() };
}

function clean(schema: unknown, context: Context): JsonObject {
  if (schema === true || !isJsonObject(schema)) return {};
  if (typeof schema.$ref === 'string') return resolveReference(schema, schema.$ref, context);
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (KEPT.has(key)) result[key] = value;
    else if (!REWRITTEN.has(key)) context.removed.add(key);
  }
  applyType(result);
  if (schema.const !== undefined && result.enum === undefined) result.enum = [schema.const];
  if (isJsonObject(result.properties)) {
    result.properties = Object.fromEntries(Object.entries(result.properties).map(([name, child]) => [name, cleanNested(child, context)]));
  }
  if (result.items !== undefined) result.items = cleanNested(Array.isArray(result.items) ? result.items[0] : result.items, context);
  if (result.type === undefined && isJsonObject(result.properties)) result.type = 'object';
  if (result.type === undefined && result.items !== undefined) result.type = 'array';
  const alternatives = [...asList(schema.anyOf), ...asList(schema.oneOf)];
  if (alternatives.length > 0) applyAlternatives(result, alternatives, context);
  for (const member of asList(schema.allOf)) merge(result, clean(member, context));
  if (Array.isArray(result.enum)) applyEnum(result, context);
  if (typeof result.format === 'string' && result.format !== 'enum' && typeof result.type === 'string' && !FORMATS[result.type]?.has(result.format)) {
    context.removed.add(`format:${result.format}`);
    delete result.format;
  }
  return result;
}

/** Nested objects without properties stay a plain `{type: "object"}` (free-form), which Gemini accepts. */
function cleanNested(schema: unknown, context: Context): JsonObject {
  const cleaned = clean(schema, context);
  if (cleaned.type === 'object' && isJsonObject(cleaned.properties) && Object.keys(cleaned.properties).length === 0) delete cleaned.properties;
  return cleaned;
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function applyType(result: JsonObject): void {
  if (!Array.isArray(result.type)) return;
  const types = result.type.filter((type): type is string => typeof type === 'string');
  const concrete = types.filter((type) => type !== 'null');
  if (types.length !== concrete.length) result.nullable = true;
  if (concrete.length === 1) result.type = concrete[0];
  else {
    delete result.type;
    if (concrete.length > 1) result.anyOf = concrete.map((type) => ({ type }));
  }
}

function applyAlternatives(result: JsonObject, alternatives: unknown[], context: Context): void {
  const isNull = (schema: unknown): boolean => isJsonObject(schema) && schema.type === 'null';
  const concrete = alternatives.filter((schema) => !isNull(schema));
  if (concrete.length !== alternatives.length) result.nullable = true;
  if (concrete.length === 1) {
    delete result.anyOf;
    merge(result, clean(concrete[0], context));
  } else if (concrete.length > 1) result.anyOf = concrete.map((schema) => cleanNested(schema, context));
  else delete result.anyOf;
}

function merge(target: JsonObject, source: JsonObject): void {
  for (const [key, value] of Object.entries(source)) {
    if (key === 'properties' && isJsonObject(target.properties) && isJsonObject(value)) target.properties = { ...target.properties, ...value };
    else if (key === 'required' && Array.isArray(target.required) && Array.isArray(value)) target.required = [...new Set([...target.required, ...value])];
    else if (target[key] === undefined) target[key] = value;
  }
}

function applyEnum(result: JsonObject, context: Context): void {
  const values = (result.enum as unknown[]).filter((value) => value !== null);
  if (values.length !== (result.enum as unknown[]).length) result.nullable = true;
  if (values.length > 0 && values.every((value) => typeof value === 'string')) {
    result.enum = values;
    result.type ??= 'string';
  } else if (values.length > 0 && values.every((value) => typeof value === 'number' || typeof value === 'boolean')) {
    result.type ??= values.every((value) => Number.isInteger(value)) ? 'integer' : typeof values[0] === 'boolean' ? 'boolean' : 'number';
    result.format = 'enum';
    result.enum = values.map(String);
  } else {
    context.removed.add('enum');
    delete result.enum;
  }
}

function resolveReference(schema: JsonObject, reference: string, context: Context): JsonObject {
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(reference);
  const definitions = match === null ? undefined : context.root[match[1] as string];
  const target = match !== null && isJsonObject(definitions) ? definitions[decodeURIComponent(match[2] as string)] : undefined;
  if (target === undefined) {
    context.removed.add('$ref');
    const { $ref: _reference, ...rest } = schema;
    return clean(rest, context);
  }
  if (context.resolving.has(reference)) throw new RecursiveSchemaError(`recursive schema reference ${reference}`);
  context.resolving.add(reference);
  try {
    const { $ref: _reference, ...siblings } = schema;
    return clean(isJsonObject(target) ? { ...target, ...siblings } : siblings, context);
  } finally {
    context.resolving.delete(reference);
  }
}
