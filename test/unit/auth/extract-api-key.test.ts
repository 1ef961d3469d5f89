import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { hasMalformedAuthorization } from '../../../src/auth/extract-api-key.js';
import { anthropicFamily, geminiFamily, openAIFamily } from '../../../src/codecs/families.js';

const BY_NAME = { openai: openAIFamily, anthropic: anthropicFamily, gemini: geminiFamily };
type KeyFamily = keyof typeof BY_NAME;

/** The key as the named family reads it. */
function extractApiKey(headers: IncomingHttpHeaders, query: URLSearchParams, family: KeyFamily): string | null {
  return BY_NAME[family].readApiKey(headers, query);
}

const none = new URLSearchParams();
const FAMILIES: KeyFamily[] = ['openai', 'anthropic', 'gemini'];

describe('extractApiKey', () => {
  it('reads a Bearer token in every family', () => {
    for (const family of FAMILIES) expect(extractApiKey({ authorization: 'Bearer sk-abc' }, none, family)).toBe('sk-abc');
  });

  it('accepts any case of "Bearer" and surrounding spaces', () => {
    expect(extractApiKey({ authorization: 'bearer   sk-abc  ' }, none, 'openai')).toBe('sk-abc');
    expect(extractApiKey({ authorization: 'BEARER\tsk-abc' }, none, 'openai')).toBe('sk-abc');
  });

  it('prefers Bearer over x-api-key, x-goog-api-key and ?key=', () => {
    const headers: IncomingHttpHeaders = { authorization: 'Bearer first', 'x-api-key': 'second', 'x-goog-api-key': 'third' };
    expect(extractApiKey(headers, new URLSearchParams('key=fourth'), 'gemini')).toBe('first');
  });

  it('falls back to x-api-key (trimmed) in every family', () => {
    for (const family of FAMILIES) expect(extractApiKey({ 'x-api-key': '  sk-ant  ' }, none, family)).toBe('sk-ant');
  });

  it('falls back to x-api-key when Authorization is not a Bearer credential', () => {
    expect(extractApiKey({ authorization: 'Basic dXNlcjpwYXNz', 'x-api-key': 'k1' }, none, 'anthropic')).toBe('k1');
    expect(extractApiKey({ authorization: 'Basic dXNlcjpwYXNz' }, none, 'anthropic')).toBeNull();
  });

  it('reads x-goog-api-key, x-vendorg-api-key and ?key= only for the gemini family', () => {
    const query = new URLSearchParams('key=from-query');
    for (const family of ['openai', 'anthropic'] as const) {
      expect(extractApiKey({ 'x-goog-api-key': 'g' }, none, family)).toBeNull();
      expect(extractApiKey({ 'x-vendorg-api-key': 'v' }, none, family)).toBeNull();
      expect(extractApiKey({}, query, family)).toBeNull();
    }
    expect(extractApiKey({ 'x-goog-api-key': ' g ' }, none, 'gemini')).toBe('g');
    expect(extractApiKey({ 'x-vendorg-api-key': 'v' }, none, 'gemini')).toBe('v');
    expect(extractApiKey({}, query, 'gemini')).toBe('from-query');
  });

  it('orders the gemini sources: x-api-key, then x-goog-api-key, then x-vendorg-api-key, then ?key=', () => {
    const query = new URLSearchParams('key=q');
    expect(extractApiKey({ 'x-api-key': 'a', 'x-goog-api-key': 'g' }, query, 'gemini')).toBe('a');
    expect(extractApiKey({ 'x-goog-api-key': 'g', 'x-vendorg-api-key': 'v' }, query, 'gemini')).toBe('g');
    expect(extractApiKey({ 'x-vendorg-api-key': 'v' }, query, 'gemini')).toBe('v');
  });

  it('is null when nothing usable is present', () => {
    expect(extractApiKey({}, none, 'openai')).toBeNull();
    expect(extractApiKey({ 'x-api-key': '' }, none, 'openai')).toBeNull();
    expect(extractApiKey({}, new URLSearchParams('key='), 'gemini')).toBeNull();
    expect(extractApiKey({ authorization: 'Bearer' }, none, 'openai')).toBeNull();
    expect(extractApiKey({ authorization: 'Bearer a b' }, none, 'openai')).toBeNull();
  });
});

describe('hasMalformedAuthorization', () => {
  it('is false without an Authorization header or with a usable Bearer credential', () => {
    expect(hasMalformedAuthorization({})).toBe(false);
    expect(hasMalformedAuthorization({ authorization: 'Bearer sk-abc' })).toBe(false);
    expect(hasMalformedAuthorization({ authorization: 'bearer sk-abc ' })).toBe(false);
  });

  it.each(['', 'Bearer', 'Bearer ', 'Bearer a b', 'Basic dXNlcjpwYXNz', 'Token sk-abc', 'sk-abc', 'Bearersk-abc'])('is true for %j', (authorization) => {
    expect(hasMalformedAuthorization({ authorization })).toBe(true);
  });

  it('agrees with extractApiKey about what a Bearer credential is', () => {
    for (const authorization of ['Bearer x', 'bearer  y ', 'Bearer', 'Basic z', 'Bearer a b', '']) {
      const extracted = extractApiKey({ authorization }, none, 'openai');
      expect(extracted === null).toBe(hasMalformedAuthorization({ authorization }));
    }
  });
});
