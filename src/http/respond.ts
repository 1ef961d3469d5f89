import type { GatewayError } from '../errors/gateway-error.js';
import { sendJsonBody } from './client-stream.js';
import type { RequestContext } from './request-context.js';

export function sendJson(context: RequestContext, status: number, value: unknown, headers?: Record<string, string>): void {
  sendRaw(context, status, JSON.stringify(value), 'application/json', headers);
}

export function sendRaw(context: RequestContext, status: number, body: string | Buffer, contentType: string, headers?: Record<string, string>): void {
  const response = context.response;
  if (response.headersSent) {
    response.end();
    return;
  }
  // Set, not written: a route may still change its answer after this (the admin bridge holds the end of what it runs).
  response.statusCode = status;
  response.setHeader('content-type', contentType);
  response.setHeader('content-length', Buffer.byteLength(body));
  if (headers !== undefined) for (const name in headers) response.setHeader(name, headers[name] as string);
  response.end(body);
}

/** The error answer in the family's shape, its head written at once (see `writeAnswerHead`). */
export function sendError(context: RequestContext, error: GatewayError): void {
  const response = context.response;
  if (response.headersSent) {
    response.end();
    return;
  }
  const headers: Record<string, string> = { ...error.headers };
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterSeconds)));
  sendJsonBody(response, error.status, context.family.encodeError(error), 'application/json', headers);
}
