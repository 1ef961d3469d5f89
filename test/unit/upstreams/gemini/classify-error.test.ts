import { describe, expect, it } from 'vitest';
import { classifyGeminiError } from '../../../../src/upstreams/gemini/classify-error.js';

const body = (code: number, status: string, message: string, reason?: string): string =>
  JSON.stringify({ error: { code, message, status, ...(reason === undefined ? {} : { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com' }] }) } });

describe('classifyGeminiError', () => {
  it.each<[number, string, ReturnType<typeof classifyGeminiError>]>([
    [400, body(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'), 'credential'],
    [400, body(400, 'INVALID_ARGUMENT', 'API key expired. Please renew the API key.'), 'credential'],
    [403, body(403, 'PERMISSION_DENIED', 'Method doesn’t allow unregistered callers'), 'credential'],
    [400, body(400, 'FAILED_PRECONDITION', 'User location is not supported for the API use.'), 'channel'],
    [429, body(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota'), 'channel'],
    [503, body(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'), 'retryable'],
    [500, '<html>oops</html>', 'retryable'],
    [400, body(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified'), 'caller'],
    [404, body(404, 'NOT_FOUND', 'models/x is not found for API version v1beta'), 'caller'],
  ])('status %i → %s', (status, text, expected) => {
    expect(classifyGeminiError(status, Buffer.from(text))).toBe(expected);
  });
});
