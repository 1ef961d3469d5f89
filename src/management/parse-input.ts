import type { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';

/** Validates input against a schema; the first problem becomes a 400 naming the field. */
export function parseInput<Schema extends z.ZodType>(schema: Schema, value: unknown): z.infer<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue === undefined || issue.path.length === 0 ? undefined : issue.path.map(String).join('.');
  const message = issue === undefined ? 'Invalid input.' : `${param === undefined ? 'Body' : `'${param}'`}: ${issue.message}`;
  throw new GatewayError('bad_request', message, param === undefined ? {} : { param });
}
