import { GatewayError } from '../../errors/gateway-error.js';
import { isJsonObject } from '../../wire/json-object.js';

/**
 * Field checks for Anthropic request bodies. Parameters are named as Anthropic names them (`messages.0.content.1`),
 * and messages read `<param>: <reason>` as Anthropic's own validation errors do.
 */
export function invalid(param: string, reason: string): GatewayError {
  return new GatewayError('bad_request', `${param}: ${reason}`, { param });
}

export function requireObject(value: unknown, param: string): Record<string, unknown> {
  if (!isJsonObject(value)) throw invalid(param, 'Input should be an object.');
  return value;
}

export function requireString(value: unknown, param: string): string {
  if (value === undefined) throw invalid(param, 'Field required.');
  if (typeof value !== 'string') throw invalid(param, 'Input should be a valid string.');
  return value;
}

export function optionalString(value: unknown, param: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(param, 'Input should be a valid string.');
  return value;
}

export function optionalBoolean(value: unknown, param: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalid(param, 'Input should be a valid boolean.');
  return value;
}

export function optionalNumber(value: unknown, param: string, min: number, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(param, 'Input should be a valid number.');
  if (value < min || value > max) throw invalid(param, `Input should be between ${min} and ${max}.`);
  return value;
}

export function optionalInteger(value: unknown, param: string, min: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw invalid(param, 'Input should be a valid integer.');
  if (value < min) throw invalid(param, `Input should be greater than or equal to ${min}.`);
  return value;
}

/**
 * Warnings kept per request at most: they only feed a header of a few KB, and a body with thousands of unknown
 * fields must not cost thousands of comparisons each.
 */
export const MAX_WARNINGS = 32;

/** Adds a warning once (builders may run again for another channel), up to MAX_WARNINGS. */
export function warnOnce(warnings: string[], warning: string): void {
  if (warnings.length < MAX_WARNINGS && !warnings.includes(warning)) warnings.push(warning);
}

/** `cache_control: {type:'ephemeral', ttl?}` on a block, validated. */
export function readCacheControl(value: unknown, param: string): { type: 'ephemeral'; ttl?: string } | undefined {
  if (value === undefined || value === null) return undefined;
  const control = requireObject(value, param);
  if (control.type !== 'ephemeral') throw invalid(`${param}.type`, "Input should be 'ephemeral'.");
  const ttl = control.ttl;
  if (ttl === undefined || ttl === null) return { type: 'ephemeral' };
  if (ttl !== '5m' && ttl !== '1h') throw invalid(`${param}.ttl`, "Input should be '5m' or '1h'.");
  return { type: 'ephemeral', ttl };
}
