import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors/gateway-error.js';
import { NO_IDENTITY, readRequestIdentity } from '../../../src/customers/request-identity.js';

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
});
