import { describe, expect, it } from 'vitest';
import { withoutAddedUser } from '../../../../src/codecs/openai-responses/caller-echo.js';

describe('withoutAddedUser (a Responses answer to a request whose user the gateway added)', () => {
  it('shows user null in a whole response object', () => {
    const answer = Buffer.from(JSON.stringify({ id: 'resp_1', object: 'response', user: 'acme', metadata: { user: 'kept' } }));
    expect(JSON.parse(withoutAddedUser(answer).toString('utf8'))).toEqual({ id: 'resp_1', object: 'response', user: null, metadata: { user: 'kept' } });
  });

  it('rewrites the response object of a stream event, keeping its event line and framing', () => {
    const event = Buffer.from(`event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', sequence_number: 9, response: { object: 'response', user: 'acme' } })}\n\n`);
    const text = withoutAddedUser(event).toString('utf8');
    expect(text.startsWith('event: response.completed\ndata: ')).toBe(true);
    expect(text.endsWith('\n\n')).toBe(true);
    expect(JSON.parse(text.split('\n')[1]?.slice(5) ?? '')).toEqual({ type: 'response.completed', sequence_number: 9, response: { object: 'response', user: null } });
  });

  it('leaves events without a response object untouched, as the same bytes', () => {
    const delta = Buffer.from(`event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'the "user" said' })}\n\n`);
    expect(withoutAddedUser(delta)).toBe(delta);
    const unrelated = Buffer.from('{"object":"response","user":null}');
    expect(withoutAddedUser(unrelated)).toBe(unrelated);
  });
});
