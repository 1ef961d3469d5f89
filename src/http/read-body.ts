import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from './request-context.js';

/** Reads the whole body, refusing with 413 as soon as it passes `maxBytes` (declared or actual). */
export async function readBody(context: RequestContext, maxBytes: number): Promise<Buffer> {
  const declared = Number(context.request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of context.request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
}

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError('payload_too_large', `Request body is larger than the limit of ${maxBytes} bytes.`);
}

/** Parses a JSON object body. Content-Type is not demanded (curl -d sends a form type); the JSON itself is. */
export async function readJsonObject(context: RequestContext, maxBytes: number): Promise<Record<string, unknown>> {
  const body = await readBody(context, maxBytes);
  if (body.length === 0) throw new GatewayError('invalid_json', 'Request body is empty; a JSON object is expected.');
  context.bodyBytes = body.length;
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
