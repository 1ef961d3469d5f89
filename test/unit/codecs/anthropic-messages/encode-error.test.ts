import { describe, expect, it } from 'vitest';
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ContentTooLargeError,
  InternalServerError,
  NotFoundError,
  PaymentRequiredError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
} from '@anthropic-ai/sdk';
import { anthropicMessagesCodec } from '../../../../src/codecs/anthropic-messages/index.js';
import { anthropicFamily } from '../../../../src/codecs/anthropic-messages/family.js';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import type { ErrorCode } from '../../../../src/errors/error-codes.js';
import { sdkAnswering } from '../../anthropic/helpers.js';

async function sdkError(body: string, status: number): Promise<APIError> {
  try {
    await sdkAnswering(body, status).messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('encodeError', () => {
  it.each([
    ['bad_request', 400, BadRequestError, 'invalid_request_error'],
    ['invalid_api_key', 401, AuthenticationError, 'authentication_error'],
    ['insufficient_balance', 402, PaymentRequiredError, 'billing_error'],
    ['model_not_allowed', 403, PermissionDeniedError, 'permission_error'],
    ['not_found', 404, NotFoundError, 'not_found_error'],
    ['payload_too_large', 413, ContentTooLargeError, 'request_too_large'],
    ['rate_limit_exceeded', 429, RateLimitError, 'rate_limit_error'],
    ['quota_exhausted', 429, RateLimitError, 'rate_limit_error'],
    ['internal_error', 500, InternalServerError, 'api_error'],
    ['upstream_error', 502, InternalServerError, 'api_error'],
    ['upstream_unavailable', 503, ServiceUnavailableError, 'api_error'],
    ['overloaded', 503, ServiceUnavailableError, 'api_error'],
  ] as const)('%s (%i) → %o with type %s, message and code readable', async (code, status, errorClass, type) => {
    const error = new GatewayError(code as ErrorCode, `Something about ${code}.`);
    expect(error.status).toBe(status);
    const body = anthropicFamily.encodeError(error);
    expect(JSON.parse(body)).toEqual({ type: 'error', error: { type, message: `Something about ${code}.`, code } });
    const raised = await sdkError(body, status);
    expect(raised).toBeInstanceOf(errorClass);
    expect(raised.type).toBe(type);
    expect(raised.apiMessage).toBe(`Something about ${code}.`);
    expect((raised.error as { error: { code: string } }).error.code).toBe(code);
  });

  it('writes a stream error as an Anthropic error event the SDK raises', async () => {
    const event = anthropicMessagesCodec.encodeStreamError(new GatewayError('upstream_error', 'The upstream failed.'));
    expect(event).toBe('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The upstream failed.","code":"upstream_error"}}\n\n');
    const stream = sdkAnswering(event).messages.stream({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    await expect(stream.finalMessage()).rejects.toMatchObject({ type: 'api_error' });
  });
});
