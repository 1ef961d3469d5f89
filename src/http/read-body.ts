import { GatewayError } from '../errors/gateway-error.js';
import { discardRequestBody } from '../multipart/drain-request.js';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../wire/json-depth.js';
import type { RequestContext } from './request-context.js';

/**
 * Reads the whole body, refusing with 413 as soon as it passes `maxBytes` (declared or actual). The rest of a
 * refused body is read and dropped first (bounded), so a client still sending gets the answer rather than a reset.
 */
export async function readBody(context: RequestContext, maxBytes: number): Promise<Buffer> {
  const declared = Number(context.request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return refuseTooLarge(context, maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of context.request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return refuseTooLarge(context, maxBytes);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
}

async function refuseTooLarge(context: RequestContext, maxBytes: number): Promise<never> {
  const error = new GatewayError('payload_too_large', `Request body is larger than the limit of ${maxBytes} bytes.`);
  if (!(await discardRequestBody(context.request))) context.response.setHeader('connection', 'close');
  throw error;
}

/**
 * Parses a JSON object body. Content-Type is not demanded (curl -d sends a form type); the JSON itself is. Nesting
 * deeper than MAX_JSON_DEPTH is refused before parsing.
 */
export async function readJsonObject(context: RequestContext, maxBytes: number): Promise<Record<string, unknown>> {
  const body = await readBody(context, maxBytes);
  if (body.length === 0) throw new GatewayError('invalid_json', 'Request body is empty; a JSON object is expected.');
  context.bodyBytes = body.length;
  if (exceedsJsonDepth(body)) {
    throw new GatewayError('invalid_json', `Request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new GatewayError('invalid_json', 'Request body is not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new GatewayError('invalid_json', 'Request body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}
