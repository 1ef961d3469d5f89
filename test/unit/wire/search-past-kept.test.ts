import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withoutGatewayThinking } from '../../../src/wire/anthropic/without-gateway-state.js';
import { KeptMembers } from '../../../src/wire/kept-members.js';
import { parseKeepingMembers } from '../../../src/wire/parse-keeping-members.js';
import { bodyWithoutGatewayState, bytesNamingModel } from '../../../src/wire/pass-through-body.js';
import { includesPastKept } from '../../../src/wire/search-past-kept.js';
import { topLevelIndex } from '../../../src/wire/top-level-index.js';

const ANY_SIZE = { budgetBytes: 1 << 20, minBytes: 1, maxValues: 64 };
const NEEDLES = ['ugw1.', '\\u'];

/** Text that may hold a needle, part of one, or none, next to JSON punctuation (`A` is written as `\u0041` below). */
const text = fc.array(fc.constantFrom('ugw1.', 'ugw1', 'gw1.', 'A', '\\', 'u', '.', ':', ',', '}', '"', ' ', 'ü', 'x'), { maxLength: 6 }).map((pieces) => pieces.join(''));

/** JSON text of `value` with some letters spelt as `\u` escapes, as a client may write them. */
function written(value: unknown, escapes: boolean): string {
  const json = JSON.stringify(value);
  return escapes ? json.replace(/A/gu, '\\u0041') : json;
}

const tools = fc.tuple(fc.array(fc.record({ name: text, description: text }), { minLength: 1, maxLength: 3 }), fc.boolean()).map(([list, escapes]) => written(list, escapes));
const messages = fc.tuple(
  fc.array(fc.record({ role: fc.constantFrom('user', 'assistant'), content: fc.array(fc.record({ type: fc.constantFrom('thinking', 'text'), thinking: text, signature: fc.constantFrom('ugw1.abc', 'sig', 'ugw1.') }), { maxLength: 2 }) }), { maxLength: 3 }),
  fc.boolean(),
).map(([list, escapes]) => written(list, escapes));
const blank = fc.constantFrom('', ' ', '\n');

/** A body with a model, kept-looking members and messages in any order, written with any blanks. */
const body = fc.tuple(fc.constantFrom('a', 'claude-x', 'ugw1.m', 'bbbbbbbbbbbb'), tools, fc.option(text), messages, fc.shuffledSubarray([0, 1, 2, 3], { minLength: 4, maxLength: 4 }), blank).map(([model, toolsText, system, messagesText, order, around]) => {
  const members = [`"model":${around}${JSON.stringify(model)}`, `"tools":${around}${toolsText}${around}`, `"messages":${messagesText}`, system === null ? null : `"system":${around}${JSON.stringify(system)}`];
  return `{${order.map((at) => members[at]).filter((member) => member !== null).join(`,${around}`)}}`;
});

describe('includesPastKept', () => {
  it('property: tells what a whole search of the bytes tells, for the caller bytes and for them naming another model', () => {
    let reused = 0;
    fc.assert(fc.property(fc.array(body, { minLength: 1, maxLength: 3 }), fc.constantFrom('a', 'ugw1.up', 'up\u00e9', 'much-longer-upstream-model-name'), (texts, upstreamModel) => {
      const kept = new KeptMembers(['tools', 'system'], ANY_SIZE).of('account-a');
      for (const sent of [...texts, ...texts]) {
        const bytes = Buffer.from(sent, 'utf8');
        const parsed = parseKeepingMembers(bytes, kept) as Record<string, unknown>;
        if (topLevelIndex(bytes).reused !== null) reused += 1;
        const out = bytesNamingModel(parsed, bytes, upstreamModel);
        for (const needle of NEEDLES) {
          expect(includesPastKept(bytes, bytes, needle)).toBe(bytes.includes(needle));
          if (out !== null) expect(includesPastKept(out, bytes, needle)).toBe(out.includes(needle));
        }
      }
    }), { numRuns: 1500 });
    expect(reused).toBeGreaterThan(1000);
  });

  it('property: the pass-through body is the same bytes whether the body reused kept values or was parsed whole', () => {
    fc.assert(fc.property(fc.array(body, { minLength: 1, maxLength: 3 }), fc.constantFrom('a', 'claude-x', 'ugw1.up'), (texts, upstreamModel) => {
      const kept = new KeptMembers(['tools', 'system'], ANY_SIZE).of('account-a');
      for (const sent of [...texts, ...texts]) {
        const bytes = Buffer.from(sent, 'utf8');
        const parsed = parseKeepingMembers(bytes, kept) as Record<string, unknown>;
        const whole = Buffer.from(sent, 'utf8');
        const expected = bodyWithoutGatewayState(JSON.parse(sent) as Record<string, unknown>, upstreamModel, withoutGatewayThinking, whole);
        const actual = bodyWithoutGatewayState(parsed, upstreamModel, withoutGatewayThinking, bytes);
        expect(typeof actual).toBe(typeof expected);
        expect(Buffer.from(actual).equals(Buffer.from(expected))).toBe(true);
      }
    }), { numRuns: 1000 });
  });

  it('refuses a needle that could stand across the edge of a member value', () => {
    const bytes = Buffer.from('{"a":1}');
    for (const needle of ['a:', ',"', 'x}', 'a b', '"x']) expect(() => includesPastKept(bytes, bytes, needle)).toThrow();
  });
});
