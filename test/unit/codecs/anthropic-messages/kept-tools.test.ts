import { describe, expect, it } from 'vitest';
import { decodeAnthropicRequest } from '../../../../src/codecs/anthropic-messages/decode-request.js';
import { KeptMembers } from '../../../../src/wire/kept-members.js';
import { parseKeepingMembers } from '../../../../src/wire/parse-keeping-members.js';

const ANY_SIZE = { budgetBytes: 1 << 20, minBytes: 1, maxValues: 8 };

/** Tools that add to the decode's context: a dropped server tool (an extension and a warning) and cache_control. */
const TOOLS = JSON.stringify([
  { name: 'Read', description: 'Reads a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } }, cache_control: { type: 'ephemeral' } },
  { type: 'bash_20250124', name: 'bash' },
  { name: 'Write', input_schema: { type: 'object' }, strict: true },
]);

function bodyText(tools: string, extra = ''): string {
  return `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"tools":${tools}${extra}}`;
}

describe('kept tools in the Anthropic decoder', () => {
  it('decodes a kept tools value as a fresh one, warnings and extensions included, each time', () => {
    const members = new KeptMembers(['tools'], ANY_SIZE);
    const kept = members.of('account-a');
    const fresh = decodeAnthropicRequest(JSON.parse(bodyText(TOOLS, ',"context_management":{}')) as Record<string, unknown>, {});
    parseKeepingMembers(Buffer.from(bodyText(TOOLS)), kept);
    for (let turn = 0; turn < 3; turn += 1) {
      const body = parseKeepingMembers(Buffer.from(bodyText(TOOLS, ',"context_management":{}')), kept) as Record<string, unknown>;
      expect(Object.isFrozen(body.tools)).toBe(true);
      const decoded = decodeAnthropicRequest(body, {});
      expect(decoded).toEqual(fresh);
      expect(decoded.warnings).toEqual(fresh.warnings);
      expect(Object.keys(decoded.extensions)).toEqual(Object.keys(fresh.extensions));
      expect(Object.isFrozen(decoded.tools)).toBe(true);
    }
  });

  it('refuses a kept tools value that does not decode each time it comes', () => {
    const members = new KeptMembers(['tools'], ANY_SIZE);
    const kept = members.of('account-a');
    const bad = JSON.stringify([{ name: 'no spaces allowed', input_schema: { type: 'object' } }]);
    for (let turn = 0; turn < 3; turn += 1) {
      const body = parseKeepingMembers(Buffer.from(bodyText(bad)), kept) as Record<string, unknown>;
      expect(() => decodeAnthropicRequest(body, {})).toThrow(/tools\.0\.name/);
    }
    expect(members.size.values).toBe(1);
  });
});
