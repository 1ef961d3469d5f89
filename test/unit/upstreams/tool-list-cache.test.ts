import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../../src/ir/chat-request.js';
import { rememberToolsSource, sourceVariant, toolsSourceOf, type ToolsSource } from '../../../src/wire/tools-source.js';
import { anthropicMessagesEndpoint } from '../../../src/codecs/anthropic-messages/endpoints.js';
import { GeminiAdapter } from '../../../src/upstreams/gemini/gemini-adapter.js';
import { OpenAIAdapter } from '../../../src/upstreams/openai/openai-adapter.js';
import { jsonWithTail, ToolListCache } from '../../../src/upstreams/tool-list-cache.js';
import { geminiChannel, unusedTransport } from '../gemini/gemini-test-support.js';
import { channel as openAIChannel } from '../openai/openai-test-helpers.js';

const FIXTURE = new URL('../../e2e/agents/__fixtures__/claude-code-tool-loop.json', import.meta.url);
const recorded = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { body: Record<string, unknown> }).body;

/** The request as its caller's bytes and the canonical request the Anthropic endpoint decodes from them. */
function decoded(body: Record<string, unknown>, withBytes = true, account = 'acct_1') {
  const bytes = Buffer.from(JSON.stringify(body));
  const envelope = anthropicMessagesEndpoint.readEnvelope({} as never, JSON.parse(bytes.toString('utf8')) as Record<string, unknown>, new Set(), withBytes ? bytes : null, account);
  return envelope.chat();
}

const openai = new OpenAIAdapter(unusedTransport);
const gemini = new GeminiAdapter(unusedTransport);

function openAIBody(body: Record<string, unknown>, withBytes = true) {
  const request = decoded(body, withBytes);
  const built = openai.buildChatRequest(openAIChannel('openai'), 'sk', request, 'gpt-4o').body;
  return { body: JSON.parse(String(built)) as Record<string, unknown>, warnings: request.warnings, bytes: Buffer.isBuffer(built) };
}

function geminiBody(body: Record<string, unknown>, withBytes = true, settings: Record<string, unknown> = {}) {
  const request = decoded(body, withBytes);
  const built = gemini.buildChatRequest(geminiChannel({ settings }), 'k', request, 'gemini-2.5-flash').body;
  return { body: JSON.parse(String(built)) as Record<string, unknown>, warnings: request.warnings, bytes: Buffer.isBuffer(built) };
}

/** The recorded request with one tool's description changed: the same length of bytes, other bytes. */
function withOtherDescription(): Record<string, unknown> {
  const tools = structuredClone(recorded.tools) as { description: string }[];
  const first = tools[0] as { description: string };
  first.description = `${first.description.slice(0, -1)}${first.description.endsWith('!') ? '?' : '!'}`;
  return { ...recorded, tools };
}

describe('translated tool lists reused by the caller’s bytes', () => {
  it('OpenAI: a reused list gives the body and warnings a fresh translation gives, and other bytes miss', () => {
    const fresh = openAIBody(recorded, false);
    expect(fresh.bytes).toBe(false);
    const first = openAIBody(recorded);
    const again = openAIBody(recorded);
    expect(again.bytes).toBe(true);
    for (const built of [first, again]) {
      expect(built.body).toEqual(fresh.body);
      expect(built.warnings).toEqual(fresh.warnings);
    }
    const other = withOtherDescription();
    const otherBuilt = openAIBody(other);
    expect(otherBuilt.body).toEqual(openAIBody(other, false).body);
    expect(otherBuilt.body).not.toEqual(fresh.body);
  });

  it('Gemini: a reused list gives the body and warnings a fresh translation gives, per schema mode, and other bytes miss', () => {
    const fresh = geminiBody(recorded, false);
    expect(fresh.warnings.some((warning) => warning.includes('schema keywords Gemini does not accept'))).toBe(true);
    for (const built of [geminiBody(recorded), geminiBody(recorded)]) {
      expect(built.bytes).toBe(true);
      expect(built.body).toEqual(fresh.body);
      expect(built.warnings).toEqual(fresh.warnings);
    }
    // The same bytes under the other schema mode are declared as that mode declares them.
    const jsonSchema = { schema_mode: 'json-schema' };
    const freshJsonSchema = geminiBody(recorded, false, jsonSchema);
    expect(freshJsonSchema.body).not.toEqual(fresh.body);
    for (const built of [geminiBody(recorded, true, jsonSchema), geminiBody(recorded, true, jsonSchema)]) {
      expect(built.body).toEqual(freshJsonSchema.body);
      expect(built.warnings).toEqual(freshJsonSchema.warnings);
    }
    const other = withOtherDescription();
    expect(geminiBody(other).body).toEqual(geminiBody(other, false).body);
    expect(geminiBody(other).body).not.toEqual(fresh.body);
  });

  it('Gemini: hosted tools and the tool config still follow the reused declarations', () => {
    const body = { ...recorded, tools: [...(recorded.tools as unknown[]), { type: 'web_search_20250305', name: 'web_search' }], tool_choice: { type: 'tool', name: 'Bash' } };
    const settings = {};
    const fresh = gemini.buildChatRequest(geminiChannel({ settings }), 'k', decoded(body, false), 'gemini-3-pro-preview').body;
    for (let turn = 0; turn < 2; turn += 1) {
      const request = decoded(body);
      const built = gemini.buildChatRequest(geminiChannel({ settings }), 'k', request, 'gemini-3-pro-preview').body;
      expect(Buffer.isBuffer(built)).toBe(true);
      expect(JSON.parse(String(built))).toEqual(JSON.parse(String(fresh)));
    }
    const parsed = JSON.parse(String(fresh)) as { tools: Record<string, unknown>[]; toolConfig: unknown };
    expect(parsed.tools.map((tool) => Object.keys(tool)[0])).toEqual(['functionDeclarations', 'googleSearch']);
    expect(parsed.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['Bash'] } });
  });
});

describe('toolsSourceOf', () => {
  const body = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'a', input_schema: { type: 'object' } }] };

  it('is the bytes of the tools member while the decoded list holds what was decoded', () => {
    const request = decoded(body);
    expect(toolsSourceOf(request.tools)?.bytes.toString()).toBe(JSON.stringify(body.tools));
    expect(toolsSourceOf(request.tools)?.protocol).toBe('anthropic-messages');
    expect(toolsSourceOf(request.tools)?.scope).toBe('acct_1');
    // A copy of the request keeps the same list.
    expect(toolsSourceOf({ ...request }.tools)).toBeDefined();
  });

  it('is bound to the caller: the same bytes from another account are another variant, never served from its entry', () => {
    const mine = toolsSourceOf(decoded(body, true, 'acct_1').tools);
    const theirs = toolsSourceOf(decoded(body, true, 'acct_2').tools);
    expect(theirs?.bytes.equals(mine?.bytes ?? Buffer.alloc(0))).toBe(true);
    expect(sourceVariant(theirs as ToolsSource)).not.toBe(sourceVariant(mine as ToolsSource));
    const cache = new ToolListCache<{ n: number }>(4, 1024);
    let translated = 0;
    cache.get((mine as ToolsSource).bytes, sourceVariant(mine as ToolsSource), () => ({ n: (translated += 1) }));
    cache.get((theirs as ToolsSource).bytes, sourceVariant(theirs as ToolsSource), () => ({ n: (translated += 1) }));
    expect(translated).toBe(2);
  });

  it('is gone once the list or a tool in it changes, or when the bytes cannot be told', () => {
    const changes: ((tools: ToolDefinition[]) => void)[] = [
      (tools) => tools.push({ name: 'b', parameters: { type: 'object' } }),
      (tools) => tools.pop(),
      (tools) => { tools[0] = { ...(tools[0] as ToolDefinition) }; },
      (tools) => { (tools[0] as ToolDefinition).name = 'renamed'; },
      (tools) => { (tools[0] as ToolDefinition).description = 'described'; },
      (tools) => { (tools[0] as ToolDefinition).strict = true; },
      (tools) => { (tools[0] as ToolDefinition).parameters = { type: 'object', properties: {} }; },
    ];
    for (const change of changes) {
      const tools = decoded(body).tools as ToolDefinition[];
      change(tools);
      expect(toolsSourceOf(tools)).toBeUndefined();
    }
    expect(toolsSourceOf(decoded(body, false).tools)).toBeUndefined();
    // `tools` written twice: JSON.parse keeps the last, the bytes are not asked which.
    const twice = Buffer.from(`{"tools":[],${JSON.stringify(body).slice(1)}`);
    const tools: ToolDefinition[] = [{ name: 'a', parameters: { type: 'object' } }];
    rememberToolsSource(tools, twice, 'anthropic-messages', 'acct_1');
    expect(toolsSourceOf(tools)).toBeUndefined();
  });
});

describe('ToolListCache', () => {
  it('answers equal bytes of the same variant from the entry, anything else by translating', () => {
    const cache = new ToolListCache<{ n: number }>(4, 1024);
    let translated = 0;
    const translate = () => ({ n: (translated += 1) });
    const first = cache.get(Buffer.from('[1,2]'), 'a', translate);
    expect(Object.isFrozen(first)).toBe(true);
    expect(cache.get(Buffer.from('[1,2]'), 'a', translate)).toBe(first);
    expect(translated).toBe(1);
    // Same length, other bytes; same bytes, other variant.
    expect(cache.get(Buffer.from('[1,3]'), 'a', translate).n).toBe(2);
    expect(cache.get(Buffer.from('[1,2]'), 'b', translate).n).toBe(3);
    expect(cache.size).toBe(3);
  });

  it('keeps at most its bound, dropping the least recently used, and keeps no list above its size bound', () => {
    const cache = new ToolListCache<{ key: string }>(2, 8);
    const get = (key: string) => cache.get(Buffer.from(key), '', () => ({ key: `${key}#${Math.random()}` }));
    const a = get('[1]');
    get('[22]');
    expect(get('[1]')).toBe(a); // [1] is now the more recent
    get('[333]'); // evicts [22]
    expect(cache.size).toBe(2);
    expect(get('[1]')).toBe(a);
    const large = Buffer.from('[123456789]');
    const once = cache.get(large, '', () => ({ key: 'large' }));
    expect(cache.get(large, '', () => ({ key: 'large again' }))).not.toBe(once);
    expect(cache.size).toBe(2);
  });

  it('keeps a copy of the bytes, not the caller’s buffer', () => {
    const cache = new ToolListCache<{ n: number }>(4, 1024);
    const source = Buffer.from('[7]');
    const value = cache.get(source, '', () => ({ n: 7 }));
    source.write('[8]');
    expect(cache.get(Buffer.from('[7]'), '', () => ({ n: 0 }))).toBe(value);
  });

  it('jsonWithTail writes the object with the tail in place of its closing brace', () => {
    const out = jsonWithTail({ a: 'é', b: [1] }, Buffer.from(',"t":[{"x":"ü"}'), ']}');
    expect(JSON.parse(out.toString('utf8'))).toEqual({ a: 'é', b: [1], t: [{ x: 'ü' }] });
    expect(jsonWithTail({ a: 1 }, Buffer.from(',"t":2')).toString()).toBe('{"a":1,"t":2}');
  });
});
