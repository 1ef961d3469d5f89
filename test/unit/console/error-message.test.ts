import { describe, expect, it } from 'vitest';
import { ApiError, errorMessage } from '../../../web/src/api/api-error.js';

describe('the console error message', () => {
  it('adds when to retry to a 429 that does not say it', () => {
    expect(errorMessage(new ApiError(429, 'rate_limit_exceeded', 'Too many sign-in emails.', 30))).toBe('Too many sign-in emails. Try again in 30 s.');
  });

  it('does not say it twice when the refusal already says when to retry', () => {
    expect(errorMessage(new ApiError(429, 'rate_limit_exceeded', 'Too many health checks. Retry after 3 s.', 3))).toBe('Too many health checks. Retry after 3 s.');
    expect(errorMessage(new ApiError(429, 'rate_limit_exceeded', 'Slow down; try again later.', 3))).toBe('Slow down; try again later.');
  });

  it('leaves other errors as the server wrote them', () => {
    expect(errorMessage(new ApiError(400, 'invalid_request_error', 'Name is required.'))).toBe('Name is required.');
  });
});
