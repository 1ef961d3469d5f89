/** JSON-RPC 2.0 as MCP uses it: one message per POST (batches were removed from the protocol). */
export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  id: JsonRpcId;
  method: string;
  params: Record<string, unknown> | undefined;
}

/** A message a client may send: a request (has an id), or a notification or response (answered with 202). */
export type ClientMessage = { kind: 'request'; request: JsonRpcRequest } | { kind: 'notification' } | { kind: 'invalid'; id: JsonRpcId | null; message: string };

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

const isId = (value: unknown): value is JsonRpcId => typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));

/** Classifies a parsed JSON value as one client message; anything else is an invalid request. */
export function readClientMessage(value: unknown): ClientMessage {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { kind: 'invalid', id: null, message: 'A message must be one JSON-RPC 2.0 object.' };
  }
  const message = value as Record<string, unknown>;
  const id = isId(message.id) ? message.id : null;
  if (message.jsonrpc !== '2.0') return { kind: 'invalid', id, message: 'jsonrpc must be "2.0".' };
  if (typeof message.method !== 'string') {
    // A response to something the server asked: the gateway asks nothing, so it is acknowledged and dropped.
    if ('result' in message || 'error' in message) return { kind: 'notification' };
    return { kind: 'invalid', id, message: 'method must be a string.' };
  }
  const params = message.params;
  if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))) {
    return { kind: 'invalid', id, message: 'params must be an object.' };
  }
  if (!('id' in message)) return { kind: 'notification' };
  if (id === null) return { kind: 'invalid', id: null, message: 'id must be a string or an integer.' };
  return { kind: 'request', request: { id, method: message.method, params: params as Record<string, unknown> | undefined } };
}

export function resultMessage(id: JsonRpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

export function errorMessage(id: JsonRpcId | null, code: number, message: string, data?: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } });
}

/** An error the gateway answers a request with, as a JSON-RPC error object. */
export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
    this.name = 'RpcError';
  }
}
