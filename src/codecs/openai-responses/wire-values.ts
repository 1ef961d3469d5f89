import { badRequest } from '../openai-chat/bad-request.js';
import { isJsonObject, type JsonObject } from '../../wire/json-object.js';

export { badRequest, isJsonObject, type JsonObject };

/** An optional string field: undefined when absent or null, a 400 naming the field when of another type. */
export function optionalString(body: JsonObject, name: string, param = name): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(param, `'${param}' must be a string.`);
  return value;
}

/** An optional number within [min, max]. */
export function optionalNumber(body: JsonObject, name: string, min: number, max: number): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw badRequest(name, `'${name}' must be a number from ${min} to ${max}.`);
  }
  return value;
}

export function optionalBoolean(body: JsonObject, name: string): boolean | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw badRequest(name, `'${name}' must be a boolean.`);
  return value;
}
