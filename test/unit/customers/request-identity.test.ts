import type { IncomingHttpHeaders } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors/gateway-error.js';
import { NO_IDENTITY, readRequestIdentity, readRequestIdentityInFull } from '../../../src/customers/request-identity.js';

/** What a call answers: the identity, or the refusal's code, field and message. */
function outcome(read: () => unknown): unknown {
  try {
    return { answer: read() };
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { refused: { code: error.code, status: error.status, param: error.param, message: error.message } };
  }
}

const PROTOCOLS = ['openai-chat', 'openai-responses', 'openai-embeddings', 'anthropic-messages', 'gemini', 'openai-images'];
/** Short texts that hit the rules: blanks, '=', ',', control characters, the tag name's alphabet. */
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', ' ', 'c-1', ' spaced ', 'a=b', 'team=ads, feature=x', 'x,,y=', 'bad name=v', 'a\u0007b', 'customer'),
);
const value = fc.oneof(text, fc.constant(null), fc.constant(undefined), fc.integer(), fc.boolean(), fc.array(text, { maxLength: 2 }));
const stringMap = fc.dictionary(fc.oneof(fc.constantFrom('customer', 'user_id', 'team', 'bad name'), fc.string({ maxLength: 6 })), value, { maxKeys: 4 });
const field = fc.oneof(value, stringMap);
const headers = fc.record({
  'x-gateway-customer': fc.oneof(text, fc.array(text, { maxLength: 2 })),
  'x-gateway-tags': fc.oneof(text, fc.array(text, { maxLength: 2 })),
  'user-agent': text,
}, { requiredKeys: [] }) as fc.Arbitrary<IncomingHttpHeaders>;
const body = fc.oneof(
  fc.constant(null),
  fc.record({ user: field, safety_identifier: field, metadata: field, labels: field, messages: fc.constant([]), model: text }, { requiredKeys: [] }),
);

describe('readRequestIdentity', () => {
  it('reads OpenAI user (then safety_identifier) and metadata as tags', () => {
    expect(readRequestIdentity('openai-chat', {}, { user: 'u-1', metadata: { team: 'search' } })).toEqual({ customer: 'u-1', tags: { team: 'search' } });
    expect(readRequestIdentity('openai-responses', {}, { safety_identifier: 'hashed-7' })).toEqual({ customer: 'hashed-7', tags: null });
  });

  it('reads Anthropic metadata.user_id and Gemini labels', () => {
    expect(readRequestIdentity('anthropic-messages', {}, { metadata: { user_id: 'abc' } })).toEqual({ customer: 'abc', tags: null });
    expect(readRequestIdentity('gemini', {}, { labels: { customer: 'g-1', env: 'prod' } })).toEqual({ customer: 'g-1', tags: { env: 'prod' } });
  });

  it('lets the gateway headers win, on any family, and merges the body tags not named by the header', () => {
    const identity = readRequestIdentity('openai-chat', { 'x-gateway-customer': ' header-customer ', 'x-gateway-tags': 'team=ads, feature=summaries' }, { user: 'body', metadata: { team: 'search', region: 'eu' } });
    expect(identity).toEqual({ customer: 'header-customer', tags: { team: 'ads', feature: 'summaries', region: 'eu' } });
    expect(readRequestIdentity('openai-chat', { 'x-gateway-customer': 'c' }, null)).toEqual({ customer: 'c', tags: null });
  });

  it('names nothing when nothing is named (the shared constant: no allocation per request)', () => {
    expect(readRequestIdentity('openai-chat', {}, { messages: [] })).toBe(NO_IDENTITY);
    expect(readRequestIdentity('openai-chat', { 'x-gateway-customer': '   ' }, {})).toBe(NO_IDENTITY);
  });

  it('refuses what a bound would have to cut: over-long customers, too many or malformed tags', () => {
    const refused = (run: () => unknown): GatewayError => {
      try {
        run();
      } catch (error) {
        if (error instanceof GatewayError) return error;
      }
      throw new Error('not refused');
    };
    expect(refused(() => readRequestIdentity('openai-chat', {}, { user: 'x'.repeat(257) })).param).toBe('user');
    expect(refused(() => readRequestIdentity('openai-chat', { 'x-gateway-customer': 'a\u0007b' }, null)).status).toBe(400);
    const many = Array.from({ length: 17 }, (_unused, index) => `t${index}=v`).join(',');
    expect(refused(() => readRequestIdentity('gemini', { 'x-gateway-tags': many }, null)).message).toContain('at most 16 tags');
    expect(refused(() => readRequestIdentity('gemini', { 'x-gateway-tags': 'bad name=v' }, null)).param).toBe('x-gateway-tags');
    expect(refused(() => readRequestIdentity('openai-chat', {}, { metadata: { team: 'a=b' } })).param).toBe('metadata.team');
  });

  it('answers a request that names nobody as the full reading does, over generated headers and bodies', () => {
    fc.assert(fc.property(fc.constantFrom(...PROTOCOLS), headers, body, (protocol, given, parsed) => {
      const fast = outcome(() => readRequestIdentity(protocol, given, parsed));
      const full = outcome(() => readRequestIdentityInFull(protocol, given, parsed));
      expect(fast).toEqual(full);
      // The shortcut's answer is the shared constant, as the full reading's is when nothing is named.
      if ((full as { answer?: unknown }).answer === NO_IDENTITY) expect((fast as { answer?: unknown }).answer).toBe(NO_IDENTITY);
    }), { numRuns: 5000 });
  });
});
