import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../../../src/wire/json-depth.js';
import { bytesNamingModel } from '../../../src/wire/pass-through-body.js';
import { indexedNamesWrittenOnce, indexTopLevel, memberJsonBytes } from '../../../src/wire/top-level-index.js';

/** Text that looks like JSON punctuation or like member names, to be found inside strings. */
const trickyText = fc.constantFrom('"model":"x",', 'say \\"model', '}]},{', '{[', '\\', '\\\\"', 'model', '"tools"', 'ünïcødé "a": {', '', 'x'.repeat(80) + '\\n"]}');

const anyValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 2 }),
    trickyText,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('model', 'tools')), tie('value'), { maxKeys: 4 }),
  ),
})).value;

const blank = fc.constantFrom('', ' ', '\n', '\t ', '\r\n  ');

/**
 * A top-level object written member by member with any blanks around its punctuation, names that may repeat or be
 * spelt with escapes: what a caller can send.
 */
const body = fc.record({
  members: fc.array(fc.tuple(fc.oneof(fc.string(), fc.constantFrom('model', 'tools', 'messages')), anyValue, fc.boolean()), { maxLength: 6 }),
  blanks: fc.array(blank, { minLength: 6, maxLength: 6 }),
}).map(({ members, blanks }) => {
  const [a = '', b = '', c = '', d = '', e = '', f = ''] = blanks;
  const written = members.map(([name, value, escaped]) => {
    const quoted = escaped && name.length > 0 ? `"\\u${name.charCodeAt(0).toString(16).padStart(4, '0')}${JSON.stringify(name.slice(1)).slice(1)}` : JSON.stringify(name);
    return `${b}${quoted}${c}:${d}${JSON.stringify(value)}${e}`;
  });
  return `${a}{${written.join(',')}${written.length === 0 ? b : ''}}${f}`;
});

describe('indexTopLevel', () => {
  it('property: every member it indexes is the one JSON.parse keeps, and it is unsure only of an escaped name', () => {
    fc.assert(fc.property(body, (text) => {
      const bytes = Buffer.from(text, 'utf8');
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const index = indexTopLevel(bytes);
      expect(index.tooDeep).toBe(false);
      if (index.members === null) {
        expect(text).toContain('\\');
        return;
      }
      expect(new Set(index.members.keys())).toEqual(new Set(Object.keys(parsed)));
      for (const [name, span] of index.members) expect(JSON.parse(bytes.toString('utf8', span.start, span.end))).toEqual(parsed[name]);
      // The names are counted as written: more than the parse keeps exactly when one is written twice.
      const keys = Object.keys(parsed);
      expect(indexedNamesWrittenOnce(index, keys)).toBe(index.written === keys.length);
    }), { numRuns: 2000 });
  });

  it('property: tells a body nested too deep exactly as the depth check does', () => {
    const nested = fc.tuple(fc.integer({ min: 0, max: MAX_JSON_DEPTH + 3 }), fc.constantFrom('[', '{"a":'), anyValue).map(([depth, opener, inner]) => {
      const close = opener === '[' ? ']' : '}';
      return `{"x":${opener.repeat(depth)}${JSON.stringify(inner)}${close.repeat(depth)}}`;
    });
    fc.assert(fc.property(nested, (text) => {
      const bytes = Buffer.from(text, 'utf8');
      expect(indexTopLevel(bytes).tooDeep).toBe(exceedsJsonDepth(bytes));
    }), { numRuns: 500 });
  });

  it('is unsure of what is not one object: an array, text after the object, unbalanced brackets, an open string', () => {
    for (const text of ['[1,2]', '{"a":1} {"b":2}', '{"a":[1}', '{"a":"x', '{"a":1', ' 3 ']) expect(indexTopLevel(Buffer.from(text)).members).toBeNull();
  });

  it('does not take a long name with an escape in its middle for what its bytes spell', () => {
    const name = `${'n'.repeat(70)}\\u0041`;
    const index = indexTopLevel(Buffer.from(`{"${name}":1,"model":"m"}`));
    expect(index.members).toBeNull();
  });

  it('counts a name written twice, and the last of them is the one indexed, as JSON.parse keeps it', () => {
    const index = indexTopLevel(Buffer.from('{"model":"a", "tools":[], "model" : "b"}'));
    expect(index.written).toBe(3);
    expect(index.members?.size).toBe(2);
    expect(indexedNamesWrittenOnce(index, ['model', 'tools'])).toBe(false);
  });

  it('memberJsonBytes: the length of a member as written, only while every name is written once', () => {
    expect(memberJsonBytes(Buffer.from('{"tools": [ {"name":"a"} ] ,"model":"m"}'), 'tools')).toBe('[ {"name":"a"} ]'.length);
    expect(memberJsonBytes(Buffer.from('{"tools":[],"tools":[1]}'), 'tools')).toBeUndefined();
    expect(memberJsonBytes(Buffer.from('{"model":"m"}'), 'tools')).toBeUndefined();
    expect(memberJsonBytes(null, 'tools')).toBeUndefined();
  });
});

describe('bytesNamingModel by the index', () => {
  it('property: whenever it answers, the answer parses to the body with model replaced; it answers for every plain body', () => {
    fc.assert(fc.property(body, fc.string(), (text, upstreamModel) => {
      const bytes = Buffer.from(text, 'utf8');
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const out = bytesNamingModel(parsed, bytes, upstreamModel);
      if (out === null) {
        const index = indexTopLevel(bytes);
        const plain = index.members !== null && index.written === Object.keys(parsed).length;
        expect(plain && typeof parsed.model === 'string').toBe(false);
        return;
      }
      expect(JSON.parse(out.toString('utf8'))).toEqual({ ...parsed, model: upstreamModel });
    }), { numRuns: 2000 });
  });
});
