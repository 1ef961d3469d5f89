import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseMessageBatchRequests } from '../../../src/batches/message-batch-input.js';

const params = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('parseMessageBatchRequests', () => {
  it('reads requests in order as lines numbered from 1, each body the request\'s params', () => {
    expect(parseMessageBatchRequests([{ custom_id: 'a', params: params() }, { custom_id: 'b-2_x', params: params({ model: 'n' }) }], 10)).toEqual({
      ok: true,
      lines: [{ line: 1, customId: 'a', body: JSON.stringify(params()) }, { line: 2, customId: 'b-2_x', body: JSON.stringify(params({ model: 'n' })) }],
    });
  });

  it('names the first bad field by its path', () => {
    const cases: Array<[unknown, string]> = [
      [undefined, 'requests'], [[], 'requests'], [{}, 'requests'], [[1], 'requests.0'],
      [[{ custom_id: 'a'.repeat(65), params: params() }], 'requests.0.custom_id'],
      [[{ custom_id: 'a/b', params: params() }], 'requests.0.custom_id'],
      [[{ custom_id: 'a', params: params() }, { custom_id: 'a', params: params() }], 'requests.1.custom_id'],
      [[{ custom_id: 'a', params: [] }], 'requests.0.params'],
      [[{ custom_id: 'a', params: params({ model: '' }) }], 'requests.0.params.model'],
      [[{ custom_id: 'a', params: params({ max_tokens: 0 }) }], 'requests.0.params.max_tokens'],
      [[{ custom_id: 'a', params: params({ max_tokens: 1.5 }) }], 'requests.0.params.max_tokens'],
      [[{ custom_id: 'a', params: params({ messages: 'hi' }) }], 'requests.0.params.messages'],
      [[{ custom_id: 'a', params: params({ stream: true }) }], 'requests.0.params.stream'],
    ];
    for (const [requests, param] of cases) {
      const parsed = parseMessageBatchRequests(requests, 10);
      expect(parsed, param).toMatchObject({ ok: false, param });
      if (!parsed.ok) expect(parsed.message.startsWith(`${param}: `)).toBe(true);
    }
    expect(parseMessageBatchRequests([{ custom_id: 'a', params: params() }, { custom_id: 'b', params: params() }], 1)).toMatchObject({ ok: false, param: 'requests' });
  });

  it('never throws, and every array of unique good ids round-trips its params', () => {
    fc.assert(fc.property(fc.anything(), (requests) => {
      parseMessageBatchRequests(requests, 50);
    }));
    const id = fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/);
    fc.assert(fc.property(fc.uniqueArray(id, { minLength: 1, maxLength: 30 }), fc.string(), (ids, content) => {
      const parsed = parseMessageBatchRequests(ids.map((customId) => ({ custom_id: customId, params: params({ system: content }) })), 1000);
      expect(parsed.ok).toBe(true);
      if (!parsed.ok) return;
      expect(parsed.lines.map((entry) => entry.customId)).toEqual(ids);
      for (const entry of parsed.lines) expect(JSON.parse(entry.body)).toEqual(params({ system: content }));
    }));
  });
});
