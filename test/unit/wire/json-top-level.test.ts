import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { namesWrittenOnce, soleStringMemberSpan, topLevelObjectMember } from '../../../src/wire/json-top-level.js';
import { bytesNamingModel } from '../../../src/wire/pass-through-body.js';
import { findUsageInMessageJson, usageFromAnthropic } from '../../../src/wire/anthropic/usage.js';
import { findUsageInJson, usageFromOpenAI } from '../../../src/wire/openai/usage.js';
import { findResponsesUsageInJson, usageFromResponses } from '../../../src/wire/responses/usage.js';

const usageObject = fc.record({
  prompt_tokens: fc.nat(),
  completion_tokens: fc.nat(),
  input_tokens: fc.nat(),
  output_tokens: fc.nat(),
  prompt_tokens_details: fc.record({ cached_tokens: fc.nat() }),
}, { requiredKeys: ['prompt_tokens', 'completion_tokens'] });

/** Text that looks like JSON punctuation and like the member itself, to be found inside strings. */
const trickyText = fc.constantFrom('"usage":{"prompt_tokens":1}', 'say \\"usage', '}]}', '{[', '\\', '\\\\"', 'usage', '"usage"', 'ünïcødé "usage": {', '');

/** Any JSON value, with usage-shaped objects and tricky strings among them. */
const anyValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 2 }),
    trickyText,
    usageObject,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string(), fc.constant('usage')), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A top-level object, with or without a `usage` member of any kind, serialised with any indentation. */
const document = fc.record({
  before: fc.dictionary(fc.string(), anyValue, { maxKeys: 4 }),
  usage: fc.option(fc.oneof(usageObject, usageObject, fc.constant(null), fc.nat(), trickyText), { nil: undefined }),
  after: fc.dictionary(fc.string(), anyValue, { maxKeys: 4 }),
  indent: fc.constantFrom(0, 2, '\t'),
}).map(({ before, usage, after, indent }) => {
  const value: Record<string, unknown> = { ...before };
  delete value.usage;
  if (usage !== undefined) value.usage = usage;
  for (const [name, member] of Object.entries(after)) if (name !== 'usage') value[name] = member;
  return JSON.stringify(value, null, indent);
});

/** The reading these functions replace: parse the whole body. */
function parsedUsage(text: string): unknown {
  return (JSON.parse(text) as Record<string, unknown>).usage;
}

describe('topLevelObjectMember', () => {
  it('property: finds exactly the top-level member a full parse finds, or says it is unsure only when it must', () => {
    fc.assert(fc.property(document, (text) => {
      const body = Buffer.from(text, 'utf8');
      const member = topLevelObjectMember(body, 'usage');
      const expected = parsedUsage(text);
      if (member === 'absent') {
        expect(expected).toBeUndefined();
      } else if (member === 'unsure') {
        // Unsure only for a usage that is not an object, or a top-level member name written with an escape.
        const escapedName = Object.keys(JSON.parse(text) as object).some((name) => JSON.stringify(name).includes('\\'));
        expect(escapedName || expected === null || typeof expected !== 'object').toBe(true);
      } else {
        expect(JSON.parse(body.toString('utf8', member.start, member.end))).toEqual(expected);
      }
    }), { numRuns: 1500 });
  });

  it('property: the usage readers answer as a full parse does, for OpenAI, Anthropic and Responses bodies', () => {
    fc.assert(fc.property(document, (text) => {
      const body = Buffer.from(text, 'utf8');
      const raw = parsedUsage(text);
      expect(findUsageInJson(body)).toEqual(usageFromOpenAI(raw));
      expect(findUsageInMessageJson(body)).toEqual(usageFromAnthropic(raw));
      expect(findResponsesUsageInJson(body)).toEqual(usageFromResponses(raw));
    }), { numRuns: 500 });
  });

  it('takes the last of two top-level members of the name, as JSON.parse does', () => {
    const text = '{"usage":{"prompt_tokens":1,"completion_tokens":1},"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4}}';
    const member = topLevelObjectMember(Buffer.from(text), 'usage');
    expect(member).not.toBe('unsure');
    expect(findUsageInJson(Buffer.from(text))).toEqual(usageFromOpenAI({ prompt_tokens: 9, completion_tokens: 4 }));
  });

  it('ignores a usage nested in the answer and one spelled inside a string', () => {
    const text = JSON.stringify({
      choices: [{ message: { content: 'here is "usage":{"prompt_tokens":999}', usage: { prompt_tokens: 555 } } }],
      usage: { prompt_tokens: 7, completion_tokens: 3 },
      system_fingerprint: 'fp_"usage"',
    });
    expect(findUsageInJson(Buffer.from(text))).toEqual(usageFromOpenAI({ prompt_tokens: 7, completion_tokens: 3 }));
    const nestedOnly = JSON.stringify({ choices: [{ message: { usage: { prompt_tokens: 555 } } }] });
    expect(topLevelObjectMember(Buffer.from(nestedOnly), 'usage')).toBe('absent');
  });

  it('is unsure of what is not a well-bracketed object, and the readers then answer null as a full parse does', () => {
    for (const text of ['', '[]', '"usage"', '{"usage":{"prompt_tokens":1}', '{"usage":{"prompt_tokens":1}}}', '{"usage":{}} trailing', 'not json', '{"a":"unterminated']) {
      const member = topLevelObjectMember(Buffer.from(text), 'usage');
      expect(member, text).toBe('unsure');
      expect(findUsageInJson(Buffer.from(text)), text).toBeNull();
    }
  });

  it('does not take a member whose name is written with an escape for another', () => {
    const text = '{"\\u0075sage":{"prompt_tokens":4,"completion_tokens":2}}';
    expect(topLevelObjectMember(Buffer.from(text), 'usage')).toBe('unsure');
    // The full parse the caller falls back to reads the escaped name as the member.
    expect(findUsageInJson(Buffer.from(text))).toEqual(usageFromOpenAI({ prompt_tokens: 4, completion_tokens: 2 }));
  });
});

describe('namesWrittenOnce: whether the caller’s bytes say what their parse says', () => {
  const once = (text: string): boolean => namesWrittenOnce(Buffer.from(text), Object.keys(JSON.parse(text) as object));
  it('each top-level name written once, whatever nested objects repeat', () => {
    expect(once('{"model":"a","tools":[{"input_schema":{"model":{"type":"string"}}}],"thinking":{"type":"enabled"},"messages":[{"content":[{"type":"thinking","thinking":"x"}]}]}')).toBe(true);
    expect(once('{ "model" : "a" ,\n "m": "\\\\u0041" }')).toBe(true);
  });
  it('a name written twice, plainly or spelt with escapes, is caught', () => {
    expect(once('{"model":"cheap","model":"dear"}')).toBe(false);
    expect(once('{"model":"cheap","tools":[{"model":1}],"model":"dear"}')).toBe(false);
    expect(once('{"mod\\u0065l":"cheap","model":"dear"}')).toBe(false);
    expect(once('{"a\\/b":1,"a/b":2}')).toBe(false);
    // A top-level name holding an escape could spell another: not sure, so the body is written again.
    expect(once('{"model":"a","m\\\\u":1}')).toBe(false);
  });
});

describe('bytesNamingModel: the caller’s bytes with only the model’s value replaced', () => {
  const named = (text: string, model: string): string | null => {
    const bytes = Buffer.from(text);
    return bytesNamingModel(JSON.parse(text) as Record<string, unknown>, bytes, model)?.toString('utf8') ?? null;
  };
  it('replaces the value of the one member named model and keeps every other byte', () => {
    expect(named('{ "model" : "claude" ,\n "tools":[{"name":"t","input_schema":{"properties":{"x":{}}}}]}', 'claude-opus-"4"')).toBe('{ "model" : "claude-opus-\\"4\\"" ,\n "tools":[{"name":"t","input_schema":{"properties":{"x":{}}}}]}');
    expect(named('{"max_tokens":1,"model":"a","messages":[{"role":"user","content":"say \\"model\\": \\"b\\""}]}', 'z')).toBe('{"max_tokens":1,"model":"z","messages":[{"role":"user","content":"say \\"model\\": \\"b\\""}]}');
  });
  it('finds the top-level member where the name also stands in nested objects or the text has escapes', () => {
    expect(named('{"tools":[{"input_schema":{"properties":{"model":{"type":"string"}}}}],"model":"a"}', 'z')).toBe('{"tools":[{"input_schema":{"properties":{"model":{"type":"string"}}}}],"model":"z"}');
    expect(named('{"model":"a","x":"\\u0041"}', 'z')).toBe('{"model":"z","x":"\\u0041"}');
  });
  it('is null where a scan cannot be sure: an escape could spell the name, a name is written twice', () => {
    expect(named('{"mod\\u0065l":"a"}', 'z')).toBeNull();
    expect(named('{"model":"a","mod\\u0065l":"b"}', 'z')).toBeNull();
    expect(named('{"model":"a","model":"b"}', 'z')).toBeNull();
    expect(named('{"model":1}', 'z')).toBeNull();
  });
  it('whenever it answers, the answer parses to the body with model replaced', () => {
    fc.assert(fc.property(document, fc.string(), fc.string(), fc.boolean(), (text, model, upstream, nested) => {
      const body = { ...(JSON.parse(text) as Record<string, unknown>), model, ...(nested ? { tools: [{ model: { model } }] } : {}) };
      const source = JSON.stringify(body);
      const answer = bytesNamingModel(body, Buffer.from(source), upstream);
      if (answer === null) return;
      expect(JSON.parse(answer.toString('utf8'))).toEqual({ ...body, model: upstream });
      expect(namesWrittenOnce(answer, Object.keys(body))).toBe(true);
    }), { numRuns: 500 });
  });
  it('soleStringMemberSpan finds no name inside strings', () => {
    const text = Buffer.from('{"a":"\\"model\\": \\"x\\"","model":"y"}');
    const span = soleStringMemberSpan(text, 'model');
    expect(span === null ? null : text.toString('utf8', span.start, span.end)).toBe('"y"');
  });
});
