import { encodeOpenAIError } from '../codecs/openai-chat/encode-error.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { ErrorFormat, RequestContext } from './request-context.js';

export type ErrorEncoder = (error: GatewayError) => string;

/** One error encoder per protocol family; families register theirs as their codecs land. */
const errorEncoders: Record<ErrorFormat, ErrorEncoder> = {
  openai: encodeOpenAIError,
  anthropic: encodeOpenAIError,
  gemini: encodeOpenAIError,
};

export function registerErrorEncoder(format: ErrorFormat, encoder: ErrorEncoder): void {
  errorEncoders[format] = encoder;
}

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
  sendRaw(context, error.status, errorEncoders[context.errorFormat](error), 'application/json', headers);
}
