import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBatchInput } from '../../../src/batches/batch-input.js';

const line = (customId: string, body: Record<string, unknown> = { model: 'm', messages: [] }, url = '/v1/chat/completions'): string =>
  JSON.stringify({ custom_id: customId, method: 'POST', url, body });

describe('parseBatchInput', () => {
  it('reads good lines in order, skipping blank lines, with the models they name', () => {
    const parsed = parseBatchInput(`${line('a', { model: 'x' })}\n\n${line('b', { model: 'y' })}\r\n${line('c', { model: 'x' })}`, '/v1/chat/completions', 10);
    expect(parsed).toEqual({
      ok: true,
      lines: [{ line: 1, customId: 'a', body: '{"model":"x"}' }, { line: 3, customId: 'b', body: '{"model":"y"}' }, { line: 4, customId: 'c', body: '{"model":"x"}' }],
      models: ['x', 'y'],
    });
  });

  it('reports each bad line by its number and code', () => {
    const text = [
      line('a'), line('a'), '[1]', 'nope', line('b', { model: 'm' }, '/v1/embeddings'), JSON.stringify({ custom_id: 'c', method: 'GET', url: '/v1/chat/completions', body: {} }),
      line('d', { messages: [] }), line('e', { model: 'm', stream: true }), line(''),
    ].join('\n');
    const parsed = parseBatchInput(text, '/v1/chat/completions', 100);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.errors.map((error) => [error.line, error.code])).toEqual([
      [2, 'duplicate_custom_id'], [3, 'invalid_request'], [4, 'invalid_json_line'], [5, 'mismatched_endpoint'], [6, 'invalid_method'],
      [7, 'missing_required_parameter'], [8, 'invalid_request'], [9, 'invalid_request'],
    ]);
  });

  it('refuses an empty file and one past the line limit', () => {
    expect(parseBatchInput('\n \n', '/v1/chat/completions', 10)).toMatchObject({ ok: false, errors: [{ code: 'empty_file' }] });
    expect(parseBatchInput([line('a'), line('b'), line('c')].join('\n'), '/v1/chat/completions', 2)).toMatchObject({ ok: false, errors: [{ code: 'too_many_requests' }] });
  });

  it('never throws, and every good file of unique ids round-trips its bodies', () => {
    fc.assert(fc.property(fc.string(), (text) => {
      parseBatchInput(text, '/v1/embeddings', 50);
    }));
    fc.assert(fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 30 }), fc.string(), (ids, content) => {
      const text = ids.map((id) => line(id, { model: 'm', input: content }, '/v1/embeddings')).join('\n');
      const parsed = parseBatchInput(text, '/v1/embeddings', 1000);
      expect(parsed.ok).toBe(true);
      if (!parsed.ok) return;
      expect(parsed.lines.map((entry) => entry.customId)).toEqual(ids);
      for (const entry of parsed.lines) expect(JSON.parse(entry.body)).toEqual({ model: 'm', input: content });
    }));
  });
});
