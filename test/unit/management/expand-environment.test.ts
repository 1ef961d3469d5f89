import { describe, expect, it } from 'vitest';
import { ConfigFileError, expandEnvironment } from '../../../src/management/apply-config-file.js';

function errorOf(run: () => unknown): ConfigFileError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigFileError) return error;
    throw error;
  }
  throw new Error('expected a ConfigFileError');
}

describe('expandEnvironment', () => {
  const env = { OPENAI_KEY: 'sk-live-123', HOST: 'api.example.com', PORT: '8443', EMPTY: '' };

  it('expands ${NAME} in strings nested in objects and arrays, leaving other values alone', () => {
    const input = {
      channels: [
        { name: 'main', api_keys: ['${OPENAI_KEY}', 'plain'], base_url: 'https://${HOST}:${PORT}/v1', priority: 3, enabled: true, extra: null,
          settings: { deep: [{ token: 'Bearer ${OPENAI_KEY}' }] } },
      ],
      models: [],
    };
    expect(expandEnvironment(input, env)).toEqual({
      channels: [
        { name: 'main', api_keys: ['sk-live-123', 'plain'], base_url: 'https://api.example.com:8443/v1', priority: 3, enabled: true, extra: null,
          settings: { deep: [{ token: 'Bearer sk-live-123' }] } },
      ],
      models: [],
    });
  });

  it('does not modify its input', () => {
    const input = { a: ['${HOST}'] };
    expandEnvironment(input, env);
    expect(input).toEqual({ a: ['${HOST}'] });
  });

  it('expands a set but empty variable to the empty string', () => {
    expect(expandEnvironment('x${EMPTY}y', env)).toBe('xy');
  });

  it('names the path of a missing variable', () => {
    const input = { channels: [{ name: 'a' }, { name: 'b', api_keys: ['ok', '${MISSING_KEY}'] }] };
    const error = errorOf(() => expandEnvironment(input, env));
    expect(error.message).toBe('channels[1].api_keys[1] refers to ${MISSING_KEY}, which is not set');
    expect(errorOf(() => expandEnvironment({ a: { b: { c: '${NOPE}' } } }, env)).message).toContain('a.b.c refers to ${NOPE}');
    expect(errorOf(() => expandEnvironment(['${NOPE}'], env)).message).toContain('[0] refers to ${NOPE}');
    expect(errorOf(() => expandEnvironment('${NOPE}', env)).message).toBe('value refers to ${NOPE}, which is not set');
  });

  it('leaves $NAME without braces and malformed references untouched', () => {
    for (const text of ['$HOST', 'cost $5', '${}', '${1ABC}', '${HOST', '$ {HOST}', '${HO-ST}', '$$']) {
      expect(expandEnvironment(text, env)).toBe(text);
    }
    expect(expandEnvironment('$${HOST}', env)).toBe('$api.example.com');
  });

  it('does not expand again inside a substituted value, nor treat $ patterns in it specially', () => {
    const tricky = { A: '${HOST}', B: "$& $1 $$ $` $'" };
    expect(expandEnvironment('${A}', { ...tricky, HOST: 'h' })).toBe('${HOST}');
    expect(expandEnvironment('<${B}>', tricky)).toBe("<$& $1 $$ $` $'>");
  });

  it('does not expand object keys', () => {
    expect(expandEnvironment({ '${HOST}': '${PORT}' }, env)).toEqual({ '${HOST}': '8443' });
  });
});
