import { GatewayError } from '../../errors/gateway-error.js';
import { isJsonObject } from '../../wire/json-object.js';

/** A 2xx body that is not what the protocol promises: the next channel may do better. */
export function malformedUpstreamAnswer(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider answered with ${what}.`);
}

const IDENTIFIER = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * An OpenAI-style `{ error: … }` object met in a 2xx body or mid-stream → its status (a numeric `code`/`status` in
 * range, else 502) and a caller-safe message: the upstream's own message may name its URLs or keys, so only its
 * type and code (when they are plain identifiers) are quoted.
 */
export function describeUpstreamError(error: unknown): { status: number; message: string } {
  const fields = isJsonObject(error) ? error : {};
  const numeric = [fields.status, fields.code].find((value): value is number => typeof value === 'number' && value >= 400 && value <= 599);
  const labels = [fields.type, fields.code].filter((value): value is string => typeof value === 'string' && IDENTIFIER.test(value));
  const detail = labels.length > 0 ? ` (${[...new Set(labels)].join(', ')})` : '';
  return { status: numeric ?? 502, message: `The upstream provider reported an error${detail}.` };
}
