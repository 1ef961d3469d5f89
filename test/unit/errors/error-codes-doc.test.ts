/**
 * The error registry against the specification's classes (one status and one type per class, whatever the code),
 * and docs/errors.md against the registry: the documented table is the generated one, so no code goes unlisted.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, errorTypeForStatus, type ErrorCode } from '../../../src/errors/error-codes.js';
import { errorCodesTable, TABLE_END, TABLE_START } from '../../../src/errors/error-codes-table.js';
import { GatewayError } from '../../../src/errors/gateway-error.js';

const DOC = new URL('../../../docs/errors.md', import.meta.url);
const CODES = Object.keys(ERROR_CODES) as ErrorCode[];

/** The statuses the specification names, and those HTTP itself gives a refused request. */
const SPEC_STATUSES = new Set([400, 401, 402, 403, 429, 502, 503]);
const HTTP_STATUSES = new Set([404, 405, 408, 409, 413, 421, 431, 500]);

describe('the error registry', () => {
  it('answers every code with a status of the specification (or HTTP\'s own), and the type of that status class', () => {
    for (const code of CODES) {
      const error = new GatewayError(code, 'x');
      expect(SPEC_STATUSES.has(error.status) || HTTP_STATUSES.has(error.status), code).toBe(true);
      expect(error.type, code).toBe(errorTypeForStatus(error.status));
    }
    expect(new GatewayError('too_many_failed_attempts', 'x')).toMatchObject({ status: 429, type: 'rate_limit_error' });
    for (const code of ['overloaded', 'service_unavailable', 'upstream_unavailable'] as const) expect(new GatewayError(code, 'x'), code).toMatchObject({ status: 503, type: 'upstream_error' });
    expect(new GatewayError('invalid_json', 'x')).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(new GatewayError('missing_api_key', 'x')).toMatchObject({ status: 401, type: 'authentication_error' });
    // A status given at the throw site brings its own class's type.
    expect(new GatewayError('invalid_credentials', 'x', { status: 400 }).type).toBe('invalid_request_error');
    expect(new GatewayError('upstream_error', 'x', { status: 503 }).type).toBe('upstream_error');
  });
});

describe('docs/errors.md', () => {
  it('lists every code of the registry with its status, type and meaning (the generated table)', () => {
    let text = readFileSync(DOC, 'utf8');
    const start = text.indexOf(TABLE_START);
    const end = text.indexOf(TABLE_END);
    expect(start, 'the start marker').toBeGreaterThanOrEqual(0);
    expect(end, 'the end marker').toBeGreaterThan(start);
    const expected = `${TABLE_START}\n${errorCodesTable()}\n${TABLE_END}`;
    if (process.env.UPDATE_ERROR_DOCS === '1') {
      writeFileSync(DOC, text.slice(0, start) + expected + text.slice(end + TABLE_END.length));
      text = readFileSync(DOC, 'utf8');
    }
    expect(text.slice(start, start + expected.length)).toBe(expected);
    for (const code of CODES) expect(text, code).toContain(`| \`${code}\` |`);
  });
});
