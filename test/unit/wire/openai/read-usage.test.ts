import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findUsageInJson, usageFromOpenAI } from '../../../../src/wire/openai/usage.js';

describe('usageFromOpenAI', () => {
  it('maps prompt, completion, cached and reasoning tokens', () => {
    const usage = usageFromOpenAI({
      prompt_tokens: 100, completion_tokens: 50, total_tokens: 150,
      prompt_tokens_details: { cached_tokens: 30, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 20 },
    });
    expect(usage).toEqual({
      input: { total: 100, noCache: 70, cacheRead: 30, cacheWrite: 0 },
      output: { total: 50, text: 30, reasoning: 20 },
    });
  });

  it('reads a usage without details', () => {
    expect(usageFromOpenAI({ prompt_tokens: 9, completion_tokens: 12, total_tokens: 21 })).toEqual({
      input: { total: 9, noCache: 9, cacheRead: 0, cacheWrite: 0 },
      output: { total: 12, text: 12, reasoning: 0 },
    });
  });

  it('clamps cached and reasoning counts to their totals', () => {
    expect(usageFromOpenAI({
      prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 50 }, completion_tokens_details: { reasoning_tokens: 99 },
    })).toEqual({
      input: { total: 10, noCache: 0, cacheRead: 10, cacheWrite: 0 },
      output: { total: 5, text: 0, reasoning: 5 },
    });
  });

  it('turns junk counts into zero and floors fractions', () => {
    expect(usageFromOpenAI({
      prompt_tokens: '100', completion_tokens: -4, prompt_tokens_details: { cached_tokens: Number.NaN }, completion_tokens_details: null,
    })).toEqual({ input: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } });
    expect(usageFromOpenAI({ prompt_tokens: Number.POSITIVE_INFINITY, completion_tokens: 3.9, prompt_tokens_details: 'x', completion_tokens_details: 7 }))
      .toEqual({ input: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, output: { total: 3, text: 3, reasoning: 0 } });
    expect(usageFromOpenAI({ prompt_tokens: 10.7, prompt_tokens_details: { cached_tokens: 2.5 } }))
      .toEqual({ input: { total: 10, noCache: 8, cacheRead: 2, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } });
  });

  it('is null for anything that is not an object', () => {
    for (const raw of [null, undefined, 5, 'usage', true]) expect(usageFromOpenAI(raw)).toBeNull();
  });

  it('is zero usage for an empty object', () => {
    expect(usageFromOpenAI({})).toEqual({ input: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } });
  });
});

const json = (value: unknown, space?: number): Buffer => Buffer.from(JSON.stringify(value, null, space), 'utf8');

describe('findUsageInJson', () => {
  const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 };
  const expected = usageFromOpenAI(usage);

  it('reads the usage of a chat completion', () => {
    const body = { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage };
    expect(findUsageInJson(json(body))).toEqual(expected);
    expect(findUsageInJson(json(body, 2))).toEqual(expected);
  });

  it('is not fooled by "usage", braces and quotes inside the message content', () => {
    const content = 'the "usage": {"prompt_tokens": 999, "completion_tokens": 999} } { \\ "usage" ends with "usage';
    const body = { choices: [{ message: { content } }, { message: { content: '{"usage":{"prompt_tokens":1}}' } }], usage };
    expect(findUsageInJson(json(body))).toEqual(expected);
  });

  it('is not fooled by a trailing string field holding "usage"', () => {
    const body = { choices: [], usage, system_fingerprint: 'usage', note: 'x"usage' };
    expect(findUsageInJson(json(body))).toEqual(expected);
  });

  it('reads details nested inside the usage object', () => {
    const full = { prompt_tokens: 40, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 10 }, completion_tokens_details: { reasoning_tokens: 25 } };
    expect(findUsageInJson(json({ choices: [], usage: full }))).toEqual(usageFromOpenAI(full));
  });

  it('is null when there is no usage, or usage is null', () => {
    expect(findUsageInJson(json({ choices: [{ message: { content: 'hi' } }] }))).toBeNull();
    expect(findUsageInJson(json({ choices: [], usage: null }))).toBeNull();
    expect(findUsageInJson(json({ choices: [{ message: { content: 'x' } }], usage: null, system_fingerprint: 'fp_1' }))).toBeNull();
  });

  it('is null for bodies that are not JSON or are cut short', () => {
    expect(findUsageInJson(Buffer.from('not json'))).toBeNull();
    expect(findUsageInJson(Buffer.from('{"choices":[],"usage":{"prompt_tokens":1'))).toBeNull();
    expect(findUsageInJson(Buffer.from(''))).toBeNull();
  });

  it('reads usage from multi-byte content bodies', () => {
    const body = { choices: [{ message: { content: 'é€😀中 "usage" {' } }], usage };
    expect(findUsageInJson(json(body))).toEqual(expected);
  });
});

/** Any Unicode scalar value (no lone surrogates), weighted toward ASCII and multi-byte ranges. */
const anyChar = fc.oneof(
  fc.integer({ min: 0, max: 0x7f }),
  fc.integer({ min: 0x80, max: 0xd7ff }),
  fc.integer({ min: 0xe000, max: 0xffff }),
  fc.integer({ min: 0x10000, max: 0x10ffff }),
).map((code) => String.fromCodePoint(code));

const trickyText = fc.array(
  fc.oneof(
    fc.string({ unit: anyChar, maxLength: 12 }),
    fc.constantFrom('"usage"', '"usage', 'usage"', 'usage', '"usage":{', '{', '}', '{}', '"', '\\', '\\"', '\\\\', '\n', 'é', '😀',
      '{"usage":{"prompt_tokens":999,"completion_tokens":999}}', '"prompt_tokens":7'),
  ),
  { maxLength: 8 },
).map((parts) => parts.join(''));

const count = fc.oneof(fc.nat({ max: 1_000_000 }), fc.constant(0));
const usageArb = fc.oneof(
  { weight: 5, arbitrary: fc.record({
    prompt_tokens: count,
    completion_tokens: count,
    total_tokens: count,
    prompt_tokens_details: fc.option(fc.record({ cached_tokens: count, audio_tokens: count }), { nil: undefined }),
    completion_tokens_details: fc.option(fc.record({ reasoning_tokens: count }), { nil: undefined }),
  }, { requiredKeys: ['prompt_tokens', 'completion_tokens'] }) },
  { weight: 1, arbitrary: fc.constant(null) },
);

const choiceArb = fc.record({
  index: fc.nat({ max: 3 }),
  message: fc.record({
    role: fc.constant('assistant'),
    content: fc.option(trickyText, { nil: null }),
    tool_calls: fc.option(fc.array(fc.record({ id: trickyText, type: fc.constant('function'), function: fc.record({ name: trickyText, arguments: trickyText }) }), { maxLength: 2 }), { nil: undefined }),
  }, { requiredKeys: ['role', 'content'] }),
  finish_reason: fc.constantFrom('stop', 'length', 'tool_calls'),
});

/**
 * Shaped like OpenAI's answer: id, object, created, model, choices, usage (an object or null), then OpenAI's flat
 * trailing fields. Every caller-influenced string (content, tool arguments, names, ids, model) comes before usage.
 * (Usage placed elsewhere, or absent, is covered by known-bugs.test.ts.)
 */
const completionArb = fc.record({
  id: trickyText,
  object: fc.constant('chat.completion'),
  created: fc.nat(),
  model: trickyText,
  choices: fc.array(choiceArb, { maxLength: 3 }),
  usage: usageArb,
  service_tier: fc.option(fc.constantFrom('default', 'flex', 'priority'), { nil: undefined }),
  system_fingerprint: fc.option(fc.stringMatching(/^fp_[0-9a-f]{10}$/), { nil: undefined }),
}, { requiredKeys: ['id', 'object', 'created', 'model', 'choices', 'usage'] });

describe('findUsageInJson property', () => {
  it('equals usageFromOpenAI(obj.usage) for random chat completions', () => {
    fc.assert(
      fc.property(completionArb, fc.constantFrom(undefined, 2), (completion, space) => {
        expect(findUsageInJson(json(completion, space))).toEqual(usageFromOpenAI(completion.usage));
      }),
      { numRuns: 500 },
    );
  });
});
