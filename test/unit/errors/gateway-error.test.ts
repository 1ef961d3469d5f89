import { describe, expect, it } from 'vitest';
import { GatewayError, toGatewayError } from '../../../src/errors/gateway-error.js';

describe('GatewayError', () => {
  it('carries no stack for an answer given on purpose, and keeps one for an internal error', () => {
    const before = Error.stackTraceLimit;
    const refusal = new GatewayError('overloaded', 'busy', { retryAfterSeconds: 1 });
    expect(refusal.stack).toBe('GatewayError: busy');
    expect(refusal.status).toBe(503);
    expect(refusal.retryAfterSeconds).toBe(1);
    const internal = toGatewayError(new TypeError('boom'));
    expect(internal.code).toBe('internal_error');
    expect(internal.stack?.split('\n').length).toBeGreaterThan(1);
    expect(internal.cause).toBeInstanceOf(TypeError);
    // the process-wide limit is left as it was, so other errors keep their stacks
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('other').stack?.split('\n').length).toBeGreaterThan(1);
  });
});
