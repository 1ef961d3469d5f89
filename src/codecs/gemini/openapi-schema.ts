import { isJsonObject, type JsonObject } from '../../wire/gemini/gemini-wire.js';

const NESTED_MAPS = ['properties'] as const;
const NESTED_LISTS = ['anyOf'] as const;

/**
 * Gemini's `Schema` (an OpenAPI 3.0 subset: upper-case `type`, `nullable`, `propertyOrdering`) → JSON Schema, the
 * canonical form of tool parameters and response schemas. `type: "STRING"` becomes `"string"`, `nullable: true`
 * becomes a `["string", "null"]` type, and the Gemini-only ordering hint is dropped. Everything else is kept.
 */
export function jsonSchemaFromGemini(schema: unknown): JsonObject {
  if (!isJsonObject(schema)) return {};
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'propertyOrdering' || key === 'nullable') continue;
    if (key === 'type' && typeof value === 'string') result.type = value.toLowerCase();
    else if ((NESTED_MAPS as readonly string[]).includes(key) && isJsonObject(value)) {
      result[key] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, jsonSchemaFromGemini(child)]));
    } else if ((NESTED_LISTS as readonly string[]).includes(key) && Array.isArray(value)) {
      result[key] = value.map((child: unknown) => jsonSchemaFromGemini(child));
    } else if (key === 'items' && isJsonObject(value)) result.items = jsonSchemaFromGemini(value);
    else result[key] = value;
  }
  if (schema.nullable === true) {
    if (typeof result.type === 'string') result.type = [result.type, 'null'];
    else if (result.type === undefined && Array.isArray(result.anyOf)) result.anyOf = [...result.anyOf, { type: 'null' }];
  }
  return result;
}
