import { GatewayError } from '../errors/gateway-error.js';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../wire/json-depth.js';
import type { KeptLookup } from '../wire/kept-members.js';
import { parseKeepingMembers } from '../wire/parse-keeping-members.js';
import { topLevelIndex } from '../wire/top-level-index.js';
import type { RequestContext } from './request-context.js';

/**
 * Reads the whole body, refusing with 413 as soon as it passes `maxBytes` (declared or actual). The listener reads
 * and drops the rest of a refused body (within a budget) before it answers, so a client still sending gets the
 * answer rather than a reset.
 */
export function readBody(context: RequestContext, maxBytes: number): Promise<Buffer> {
  if (context.preReadBody !== undefined) return Promise.resolve(context.preReadBody);
  const declared = Number(context.request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.reject(tooLarge(maxBytes));
  return collectBody(context, maxBytes);
}

/**
 * The body's chunks through the stream's events: a stream's async iterator costs about 1.5 KB of short-lived
 * objects per request, more than the small body it reads.
 */
function collectBody(context: RequestContext, maxBytes: number): Promise<Buffer> {
  const request = context.request;
  if (request.errored !== null) return Promise.reject(request.errored);
  if (request.readableEnded) return Promise.resolve(Buffer.alloc(0));
  if (request.destroyed) return Promise.reject(prematureClose());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      stop();
      reject(tooLarge(maxBytes));
    };
    const onEnd = (): void => {
      stop();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (error: Error): void => {
      stop();
      reject(error);
    };
    const onClose = (): void => {
      stop();
      reject(request.errored ?? prematureClose());
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
}

/** What a stream's reader meets when the stream closes before its end. */
function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError('payload_too_large', `Request body is larger than the limit of ${maxBytes} bytes.`);
}

/**
 * Parses a JSON object body. Content-Type is not demanded (curl -d sends a form type); the JSON itself is. Nesting
 * deeper than MAX_JSON_DEPTH is refused before parsing.
 */
export async function readJsonObject(context: RequestContext, maxBytes: number): Promise<Record<string, unknown>> {
  const body = await readBody(context, maxBytes);
  return parseJsonObject(context, body, false);
}

/**
 * The JSON object of a body already read (`readBody`), with its bytes (for a pass-through request forwarded as the
 * caller sent it): `readJsonObject` without a promise of its own. The bytes' depth is read by the pass that indexes
 * their top-level members (`topLevelIndex`), which whatever later asks about the same bytes (the pass-through body,
 * the token estimate) reuses. `kept`: member values kept parsed by their bytes, which the body reuses instead of
 * parsing them again (`parseKeepingMembers`; they are frozen).
 */
export function parseJsonObjectAndBytes(context: RequestContext, bytes: Buffer, kept?: KeptLookup): { body: Record<string, unknown>; bytes: Buffer } {
  return { body: parseJsonObject(context, bytes, true, kept), bytes };
}

function parseWhole(body: Buffer): unknown {
  return JSON.parse(body.toString('utf8'));
}

/**
 * `indexed`: the depth is read by the top-level index (kept for whatever later asks about the same bytes) rather than
 * by a pass of its own. `kept`: see `parseJsonObjectAndBytes`.
 */
function parseJsonObject(context: RequestContext, body: Buffer, indexed: boolean, kept?: KeptLookup): Record<string, unknown> {
  if (body.length === 0) throw new GatewayError('invalid_json', 'Request body is empty; a JSON object is expected.');
  context.bodyBytes = body.length;
  if (indexed ? topLevelIndex(body, kept).tooDeep : exceedsJsonDepth(body)) {
    throw new GatewayError('invalid_json', `Request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  let value: unknown;
  try {
    value = kept === undefined ? parseWhole(body) : parseKeepingMembers(body, kept);
  } catch {
    throw new GatewayError('invalid_json', 'Request body is not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new GatewayError('invalid_json', 'Request body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}
