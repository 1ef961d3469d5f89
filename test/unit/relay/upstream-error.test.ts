import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { callerErrorFromUpstream, isRetryableUpstreamStatus, isUpstreamCredentialFailure, scrubUpstreamText } from '../../../src/relay/upstream-error.js';

const body = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

describe('scrubUpstreamText', () => {
  it("removes OpenAI's masked key and its URL from the invalid-key message", () => {
    const text = 'Incorrect API key provided: sk-abc***wxyz. You can find your API key at https://platform.openai.com/account/api-keys.';
    const scrubbed = scrubUpstreamText(text);
    expect(scrubbed).toBe('Incorrect API key provided: [redacted] You can find your API key at [upstream]');
    expect(scrubbed).not.toMatch(/sk-|abc|wxyz|openai\.com/);
  });

  it.each([
    'sk-proj-AbCdEf0123456789_abcdefXYZ',
    'sk-ant-api03-abcdefghijklmnop-QRSTUV',
    'sk-1234567890abcdef',
    'sk_live_abcdef123456',
    'rk-abcdef1234',
    'pk_test_abcdef123456',
    'AIzaSyA1234567890abcdefghijklmnopqrs',
  ])('removes %s wherever it sits', (secret) => {
    for (const text of [secret, `key ${secret} rejected`, `"${secret}"`, `(${secret})`, `key=${secret}`]) {
      const scrubbed = scrubUpstreamText(text);
      expect(scrubbed).not.toContain(secret);
      expect(scrubbed).not.toContain(secret.slice(3, 12));
      expect(scrubbed).toContain('[redacted]');
    }
  });

  it('removes Bearer tokens', () => {
    const scrubbed = scrubUpstreamText('header was Authorization: Bearer eyJhbGciOi.payload.sig and more');
    expect(scrubbed).toBe('header was Authorization: [redacted] and more');
  });

  it('removes URLs, including ones carrying keys', () => {
    const scrubbed = scrubUpstreamText('POST http://10.0.0.5:8080/v1/chat?key=secret123 failed; see https://status.example.com.');
    expect(scrubbed).not.toMatch(/10\.0\.0\.5|secret123|example\.com/);
    expect(scrubbed).toContain('[upstream]');
  });

  it('keeps ordinary text, including words that merely contain "sk"', () => {
    for (const text of ['Invalid value for temperature: must be <= 2', 'risk-assessment failed', 'task-force', 'desk_lamp123', 'The model `gpt-5` does not exist']) {
      expect(scrubUpstreamText(text)).toBe(text);
    }
  });

  it('caps the text at 1000 characters', () => {
    expect(scrubUpstreamText('x'.repeat(5000))).toHaveLength(1000);
  });

  it('never lets a generated key through', () => {
    const secret = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'), minLength: 20, maxLength: 60 });
    const prefix = fc.constantFrom('sk-', 'sk-proj-', 'sk-ant-api03-', 'sk_live_', 'AIza');
    const around = fc.string({ maxLength: 30 }).map((text) => text.replace(/\w$/, ''));
    fc.assert(fc.property(around, prefix, secret, around, (before, start, key, after) => {
      const text = `${before} ${start}${key} ${after}`;
      expect(scrubUpstreamText(text)).not.toContain(key);
    }), { numRuns: 300 });
  });
});

describe('callerErrorFromUpstream', () => {
  it('maps 400 to bad_request with the scrubbed upstream message and param', () => {
    const error = callerErrorFromUpstream(400, body({ error: { message: 'Invalid value for temperature', type: 'invalid_request_error', param: 'temperature', code: null } }));
    expect(error.code).toBe('bad_request');
    expect(error.status).toBe(400);
    expect(error.message).toBe('Upstream: Invalid value for temperature');
    expect(error.param).toBe('temperature');
  });

  it('maps 404 and 422 to bad_request', () => {
    const notFound = callerErrorFromUpstream(404, body({ error: { message: 'The model `gpt-9` does not exist', code: 'model_not_found' } }));
    expect(notFound.code).toBe('bad_request');
    expect(notFound.status).toBe(400);
    expect(notFound.message).toBe('Upstream: The model `gpt-9` does not exist');
    expect(notFound.param).toBeUndefined();
    const unprocessable = callerErrorFromUpstream(422, body({ message: 'messages: too long' }));
    expect(unprocessable.code).toBe('bad_request');
    expect(unprocessable.message).toBe('Upstream: messages: too long');
  });

  it('maps 413 to payload_too_large', () => {
    const error = callerErrorFromUpstream(413, body({ error: { message: 'Request too large' } }));
    expect(error.code).toBe('payload_too_large');
    expect(error.status).toBe(413);
    expect(error.message).toBe('Upstream: Request too large');
  });

  it('reads a plain-string error', () => {
    expect(callerErrorFromUpstream(400, body({ error: 'bad input' })).message).toBe('Upstream: bad input');
  });

  it('scrubs keys and URLs out of the upstream message', () => {
    const error = callerErrorFromUpstream(400, body({ error: { message: 'key sk-proj-abcdef123456 at https://api.internal:9000/v1 is bad' } }));
    expect(error.message).toBe('Upstream: key [redacted] at [upstream] is bad');
  });

  it('never shows a raw non-JSON body', () => {
    for (const raw of ['<html><body>502 nginx sk-leaked123456 internal-host-7</body></html>', 'plain text: internal-host-7', '', '{"error":', 'null', '"sk-leaked123456"', '[1,2]']) {
      const error = callerErrorFromUpstream(400, Buffer.from(raw));
      expect(error.message).toBe('The upstream provider rejected the request (HTTP 400).');
      expect(error.param).toBeUndefined();
    }
    expect(callerErrorFromUpstream(413, Buffer.from('<html>too big</html>')).message).toBe('The upstream provider rejected the request (HTTP 413).');
  });

  it('keeps the generic message when the JSON has no usable text', () => {
    for (const value of [{ error: { message: '' } }, { error: { message: 5 } }, { detail: 'x' }, { error: {} }]) {
      expect(callerErrorFromUpstream(422, body(value)).message).toBe('The upstream provider rejected the request (HTTP 422).');
    }
  });

  it('ignores a non-string param', () => {
    expect(callerErrorFromUpstream(400, body({ error: { message: 'x', param: 3 } })).param).toBeUndefined();
  });
});

describe('upstream status classes', () => {
  it('retries overload, throttling, timeouts, conflicts and server faults only', () => {
    for (const status of [500, 502, 503, 504, 529, 429, 408, 409]) expect(isRetryableUpstreamStatus(status)).toBe(true);
    for (const status of [400, 401, 403, 404, 413, 422, 200]) expect(isRetryableUpstreamStatus(status)).toBe(false);
  });

  it('calls 401 and 403 credential failures', () => {
    expect(isUpstreamCredentialFailure(401)).toBe(true);
    expect(isUpstreamCredentialFailure(403)).toBe(true);
    expect(isUpstreamCredentialFailure(400)).toBe(false);
    expect(isUpstreamCredentialFailure(429)).toBe(false);
  });
});
