import type { GatewayError } from '../errors/gateway-error.js';
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
  response.statusCode = status;
  response.setHeader('content-type', contentType);
  response.setHeader('content-length', Buffer.byteLength(body));
  if (headers !== undefined) for (const name in headers) response.setHeader(name, headers[name] as string);
  response.end(body);
}

export function sendError(context: RequestContext, error: GatewayError): void {
  const headers: Record<string, string> = { ...error.headers };
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterSeconds)));
  sendRaw(context, error.status, context.family.encodeError(error), 'application/json', headers);
}
