import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeptMembers } from '../../../src/wire/kept-members.js';
import { parseKeepingMembers } from '../../../src/wire/parse-keeping-members.js';
import { indexTopLevel } from '../../../src/wire/top-level-index.js';

const ANY_SIZE = { budgetBytes: 1 << 20, minBytes: 1, maxValues: 64 };

/** Values a caller sends again and again, written with different blanks: their bytes differ, their values not. */
const TOOLS = [
  '[{"name":"Read","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}]',
  '[ {"name": "Read", "input_schema": {"type": "object"}} , {"name":"model","description":"say \\"model\\": {["} ]',
  '[{"name":"ünïcødé","description":"}]},{\\\\","input_schema":{"type":"object","properties":{"tools":{"type":"array","items":{}}}}}]',
  '{"not":"a list"}',
  '"tools"',
  '17',
  'null',
  '[]',
];

/** One byte of a kept value changed, inserted or removed: the bytes no longer match what was kept. */
const mutated = fc.tuple(fc.constantFrom(...TOOLS), fc.nat(), fc.constantFrom('', ' ', 'x', '"', '}', ']', ',', '\\', '0')).map(([text, at, byte]) => {
  const where = at % (text.length + 1);
  return text.slice(0, where) + byte + text.slice(where + (byte === ' ' ? 0 : 1));
});

const blank = fc.constantFrom('', ' ', '\n', '\t ');

const member = fc.oneof(
  fc.tuple(fc.constantFrom('tools', 'system'), fc.oneof(fc.constantFrom(...TOOLS), mutated)),
  fc.tuple(fc.constantFrom('model', 'messages', 'tools', '"tools"', 'x'), fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value))),
);

/** A body as a caller may write it: kept-looking members among others, names that may repeat, any blanks. */
const body = fc.tuple(fc.array(fc.tuple(member, blank, blank), { maxLength: 5 }), blank).map(([members, after]) => {
  const written = members.map(([[name, value], before, around]) => `${before}${JSON.stringify(name)}${around}:${around}${value}${before}`);
  return `{${written.join(',')}}${after}`;
});

/** The same text, sometimes broken: a byte removed or put in anywhere (inside a kept value's bytes too). */
const maybeBroken = fc.tuple(body, fc.option(fc.tuple(fc.nat(), fc.constantFrom('', '{', '}', '[', ']', ',', ':', '"', '\\', '0'))), fc.boolean()).map(([text, damage]) => {
  if (damage === null) return text;
  const [at, byte] = damage;
  const where = at % (text.length + 1);
  return text.slice(0, where) + byte + text.slice(where + (byte === '' ? 1 : 0));
});

function outcome(parse: () => unknown): { value: unknown; keys: string[] } | 'throws' {
  try {
    const value = parse();
    return { value, keys: value !== null && typeof value === 'object' ? Object.keys(value) : [] };
  } catch (error) {
    expect(error).toBeInstanceOf(SyntaxError);
    return 'throws';
  }
}

describe('parseKeepingMembers', () => {
  it('property: gives what JSON.parse gives, member order included, and throws exactly when it throws, whatever was kept before', () => {
    let reusedBodies = 0;
    fc.assert(fc.property(fc.array(maybeBroken, { minLength: 1, maxLength: 4 }), (texts) => {
      const members = new KeptMembers(['tools', 'system'], ANY_SIZE);
    const kept = members.of('account-a');
      for (const text of texts) {
        const bytes = Buffer.from(text, 'utf8');
        const expected = outcome(() => JSON.parse(text));
        const actual = outcome(() => parseKeepingMembers(bytes, kept));
        expect(actual).toEqual(expected);
        if (indexTopLevel(bytes, undefined, kept).reused !== null && expected !== 'throws') reusedBodies += 1;
      }
    }), { numRuns: 3000 });
    // The property held on bodies that did reuse kept values, not only on bodies parsed whole.
    expect(reusedBodies).toBeGreaterThan(300);
  });

  it('property: the index read with kept values is the index read without them', () => {
    fc.assert(fc.property(fc.array(maybeBroken, { minLength: 2, maxLength: 4 }), fc.integer({ min: 1, max: 5 }), (texts, maxDepth) => {
      const members = new KeptMembers(['tools', 'system'], ANY_SIZE);
    const kept = members.of('account-a');
      for (const text of texts) {
        const bytes = Buffer.from(text, 'utf8');
        const { reused: _reused, ...withKept } = indexTopLevel(bytes, maxDepth, kept);
        const { reused: _none, ...without } = indexTopLevel(bytes, maxDepth);
        expect(withKept).toEqual(without);
        try {
          parseKeepingMembers(bytes, kept);
        } catch {
          // A broken body is kept nothing from.
        }
      }
    }), { numRuns: 2000 });
  });

  it('reuses the kept value of identical bytes, frozen, and misses bytes that differ by one', () => {
    const members = new KeptMembers(['tools'], ANY_SIZE);
    const kept = members.of('account-a');
    const tools = TOOLS[0] as string;
    const first = parseKeepingMembers(Buffer.from(`{"model":"a","tools":${tools},"stream":true}`), kept) as Record<string, unknown>;
    expect(members.size.values).toBe(1);
    const again = Buffer.from(`{"model":"b", "tools": ${tools} }`);
    expect(indexTopLevel(again, undefined, kept).reused?.get('tools')?.bytes.toString()).toBe(tools);
    const second = parseKeepingMembers(again, kept) as Record<string, unknown>;
    expect(second).toEqual({ model: 'b', tools: JSON.parse(tools) });
    expect(second.tools).toBe(first.tools);
    expect(Object.isFrozen(second.tools)).toBe(true);
    expect(() => {
      ((second.tools as Array<Record<string, unknown>>)[0] as Record<string, unknown>).name = 'Write';
    }).toThrow(TypeError);

    const changed = Buffer.from(`{"model":"b","tools":${tools.replace('Read', 'Reed')}}`);
    expect(indexTopLevel(changed, undefined, kept).reused).toBeNull();
    const third = parseKeepingMembers(changed, kept) as Record<string, unknown>;
    expect(third.tools).not.toBe(first.tools);
    expect((third.tools as Array<{ name: string }>)[0]?.name).toBe('Reed');
    // Bytes that start with the kept ones but do not end the member there are not the kept value.
    const longer = Buffer.from(`{"tools":${tools}2}`);
    expect(indexTopLevel(longer, undefined, kept).reused).toBeNull();
    expect(() => parseKeepingMembers(longer, kept)).toThrow(SyntaxError);
  });

  it('reuses a value only for the caller whose body gave it: another caller sending the same bytes parses them', () => {
    const members = new KeptMembers(['tools'], ANY_SIZE);
    const tools = TOOLS[0] as string;
    const text = `{"model":"a","tools":${tools}}`;
    const mine = parseKeepingMembers(Buffer.from(text), members.of('account-a')) as Record<string, unknown>;
    const theirs = Buffer.from(text);
    expect(indexTopLevel(theirs, undefined, members.of('account-b')).reused).toBeNull();
    const parsed = parseKeepingMembers(theirs, members.of('account-b')) as Record<string, unknown>;
    expect(parsed.tools).not.toBe(mine.tools);
    expect(parsed).toEqual(mine);
    expect(members.size.values).toBe(2);
    expect(indexTopLevel(Buffer.from(text), undefined, members.of('account-a')).reused?.get('tools')?.scope).toBe('account-a');
  });

  it('keeps only the named members, within the size limits, and drops the least recently matched first', () => {
    const members = new KeptMembers(['tools'], { budgetBytes: 100, minBytes: 10, maxValues: 2 });
    const kept = members.of('account-a');
    const tools = (name: string): string => `[{"name":"${name}"}]`;
    parseKeepingMembers(Buffer.from(`{"messages":${tools('m0000000')},"tools":"short"}`), kept);
    expect(members.size.values).toBe(0);
    parseKeepingMembers(Buffer.from(`{"tools":${tools('x'.repeat(30))}}`), kept);
    expect(members.size.values).toBe(0); // over a quarter of the budget
    parseKeepingMembers(Buffer.from(`{"tools":${tools('a')}}`), kept);
    parseKeepingMembers(Buffer.from(`{"tools":${tools('b')}}`), kept);
    expect(members.size).toEqual({ values: 2, bytes: 2 * tools('a').length });
    parseKeepingMembers(Buffer.from(`{"tools":${tools('a')}}`), kept);
    parseKeepingMembers(Buffer.from(`{"tools":${tools('c')}}`), kept);
    expect(members.size.values).toBe(2);
    expect(indexTopLevel(Buffer.from(`{"tools":${tools('a')}}`), undefined, kept).reused).not.toBeNull();
    expect(indexTopLevel(Buffer.from(`{"tools":${tools('b')}}`), undefined, kept).reused).toBeNull();
    expect(indexTopLevel(Buffer.from(`{"tools":${tools('c')}}`), undefined, kept).reused).not.toBeNull();
  });

  it('tells a body too deep by the kept value it steps over', () => {
    const members = new KeptMembers(['tools'], ANY_SIZE);
    const kept = members.of('account-a');
    parseKeepingMembers(Buffer.from('{"tools":[[[1]]]}'), kept);
    const body = Buffer.from('{"tools":[[[1]]]}');
    expect(indexTopLevel(body, 4, kept)).toMatchObject({ tooDeep: false });
    expect(indexTopLevel(body, 3, kept)).toMatchObject({ tooDeep: true, members: null });
    expect(indexTopLevel(body, 3).tooDeep).toBe(true);
  });

  it('parses a body naming a kept member twice whole, keeping the last as JSON.parse does', () => {
    const members = new KeptMembers(['tools'], ANY_SIZE);
    const kept = members.of('account-a');
    const tools = TOOLS[0] as string;
    parseKeepingMembers(Buffer.from(`{"tools":${tools}}`), kept);
    expect(parseKeepingMembers(Buffer.from(`{"tools":${tools},"tools":[1]}`), kept)).toEqual({ tools: [1] });
    expect(parseKeepingMembers(Buffer.from(`{"tools":[1],"tools":${tools}}`), kept)).toEqual({ tools: JSON.parse(tools) });
  });
});
