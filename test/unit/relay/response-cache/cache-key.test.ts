import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import { canonicalJson, responseCacheKey } from '../../../../src/relay/response-cache/cache-key.js';

const request = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'alias-name',
  system: [{ type: 'text', text: 'be brief' }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
  stream: false,
  maxOutputTokens: 100,
  extensions: {},
  warnings: [],
  ...overrides,
});

const key = (chat: ChatRequest, namespace = 'account:acc_1', model = 'model-a'): string | null => responseCacheKey(namespace, model, chat);

describe('response cache key', () => {
  it('is a SHA-256 hex digest', () => {
    expect(key(request())).toMatch(/^[0-9a-f]{64}$/);
  });

  it('fields that do not change the answer leave the key alone', () => {
    fc.assert(fc.property(
      fc.boolean(),
      fc.option(fc.string(), { nil: undefined }),
      fc.array(fc.string()),
      fc.dictionary(fc.constantFrom('metadata', 'store', 'user', 'provider'), fc.jsonValue()),
      fc.array(fc.string({ minLength: 1 })),
      (stream, user, warnings, neutral, dropped) => {
        const varied = request({ stream, warnings, extensions: neutral, droppedHostedTools: dropped, model: 'another-alias', ...(user === undefined ? {} : { user }) });
        expect(key(varied)).toBe(key(request()));
      },
    ));
  });

  it('field order does not matter', () => {
    const reordered = JSON.parse(JSON.stringify({ warnings: [], extensions: {}, maxOutputTokens: 100, stream: false, messages: request().messages, system: request().system, model: 'x' })) as ChatRequest;
    expect(key(reordered)).toBe(key(request()));
  });

  it('every field that shapes the answer changes the key', () => {
    const changes: Array<Partial<ChatRequest>> = [
      { system: [{ type: 'text', text: 'be long' }] },
      { messages: [{ role: 'user', content: [{ type: 'text', text: 'hello!' }] }] },
      { maxOutputTokens: 101 },
      { temperature: 0.5 },
      { topP: 0.9 },
      { topK: 40 },
      { stopSequences: ['END'] },
      { seed: 7 },
      { presencePenalty: 0.1 },
      { frequencyPenalty: 0.1 },
      { tools: [{ name: 'f', parameters: { type: 'object' } }] },
      { hostedTools: [{ kind: 'web-search' }] },
      { toolChoice: { kind: 'required' } },
      { parallelToolCalls: false },
      { responseFormat: { kind: 'json' } },
      { reasoning: { effort: 'high' } },
    ];
    const base = key(request());
    const seen = new Set([base]);
    for (const change of changes) {
      const changed = key(request(change));
      expect(changed, JSON.stringify(change)).not.toBe(base);
      seen.add(changed);
    }
    expect(seen.size).toBe(changes.length + 1);
    fc.assert(fc.property(fc.string(), fc.string(), (first, second) => {
      fc.pre(first !== second);
      const of = (text: string): string | null => key(request({ messages: [{ role: 'user', content: [{ type: 'text', text }] }] }));
      expect(of(first)).not.toBe(of(second));
    }));
  });

  it('the namespace and the public model id are part of the key', () => {
    expect(key(request(), 'account:acc_2')).not.toBe(key(request()));
    expect(key(request(), 'shared')).not.toBe(key(request()));
    expect(key(request(), 'account:acc_1', 'model-b')).not.toBe(key(request()));
  });

  it('a request carrying a field the canonical answer cannot honour has no key', () => {
    expect(key(request({ extensions: { logprobs: true } }))).toBeNull();
    expect(key(request({ extensions: { safetySettings: [] } }))).toBeNull();
  });

  it('canonical JSON sorts keys and leaves out undefined', () => {
    expect(canonicalJson({ b: 1, a: [{ d: undefined, c: 'x' }], e: undefined })).toBe('{"a":[{"c":"x"}],"b":1}');
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
    }));
  });
});
