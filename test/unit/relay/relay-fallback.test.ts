import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors/gateway-error.js';
import { answerNamingModel } from '../../../src/wire/pass-through-body.js';
import { anthropicWire } from '../../../src/wire/anthropic/wire.js';
import { geminiWire } from '../../../src/wire/gemini/wire.js';
import { openAIWire } from '../../../src/wire/openai/wire.js';
import { fallsBack } from '../../../src/relay/relay-fallback.js';
import { callerErrorFromUpstream } from '../../../src/relay/upstream-error.js';

const refusal = (status: number, body: unknown) => callerErrorFromUpstream(status, Buffer.from(JSON.stringify(body)));

describe('upstream refusals', () => {
  it('read the context-window overflow of each provider', () => {
    expect(refusal(400, { error: { message: "This model's maximum context length is 8192 tokens.", code: 'context_length_exceeded' } }).reason).toBe('context_length');
    expect(refusal(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } }).reason).toBe('context_length');
    expect(refusal(400, { error: { code: 400, status: 'INVALID_ARGUMENT', message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).' } }).reason).toBe('context_length');
  });

  it('read content-policy refusals by code or message', () => {
    expect(refusal(400, { error: { message: 'Your request was rejected as a result of our safety system.', code: 'content_policy_violation' } }).reason).toBe('content_policy');
    expect(refusal(400, { error: { message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", code: 'content_filter' } }).reason).toBe('content_policy');
  });

  it('leave other refusals without a reason, and never show the upstream code', () => {
    const plain = refusal(400, { error: { message: "Invalid value for 'temperature'.", code: 'invalid_value', param: 'temperature' } });
    expect(plain.reason).toBeNull();
    expect(plain.message).not.toContain('invalid_value');
    expect(refusal(404, { error: { message: 'maximum context length' } }).reason).toBeNull();
    expect(callerErrorFromUpstream(400, Buffer.from('not json')).reason).toBeNull();
  });
});

describe('fallsBack', () => {
  it('on exhausted or unavailable channels, a context overflow, and reasoned refusals only', () => {
    expect(fallsBack(new GatewayError('upstream_error', 'x', { status: 502 }))).toBe(true);
    expect(fallsBack(new GatewayError('upstream_unavailable', 'x'))).toBe(true);
    expect(fallsBack(new GatewayError('context_length_exceeded', 'x'))).toBe(true);
    expect(fallsBack(refusal(400, { error: { message: 'x', code: 'content_policy_violation' } }))).toBe(true);
    expect(fallsBack(refusal(400, { error: { message: 'bad temperature' } }))).toBe(false);
    expect(fallsBack(new GatewayError('bad_request', 'x'))).toBe(false);
    expect(fallsBack(new GatewayError('model_not_allowed', 'x'))).toBe(false);
    expect(fallsBack(new Error('boom'))).toBe(false);
  });
});

describe('answerNamingModel', () => {
  it('names the answering model in the model field of the protocol', () => {
    expect(JSON.parse(answerNamingModel(anthropicWire, Buffer.from('{"model":"claude-x","id":"m"}'), 'public').toString())).toEqual({ model: 'public', id: 'm' });
    expect(JSON.parse(answerNamingModel(geminiWire, Buffer.from('{"modelVersion":"gemini-x"}'), 'public').toString())).toEqual({ modelVersion: 'public' });
    expect(answerNamingModel(openAIWire, Buffer.from('[1]'), 'public').toString()).toBe('[1]');
    expect(answerNamingModel(openAIWire, Buffer.from('oops'), 'public').toString()).toBe('oops');
  });
});
