import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AnthropicStreamUsageObserver } from '../../../src/codecs/anthropic-messages/stream-usage-observer.js';
import { GeminiStreamUsageObserver } from '../../../src/codecs/gemini/stream-usage-observer.js';
import { ResponsesPassThroughObserver } from '../../../src/codecs/openai-responses/stream-usage-observer.js';
import { hostedToolOfferOfTools } from '../../../src/codecs/anthropic-messages/decode-options.js';
import { hostedToolOfferOfOpenAIChatBody } from '../../../src/codecs/openai-chat/request-needs.js';
import { hostedToolOfferOfResponsesBody } from '../../../src/codecs/openai-responses/request-needs.js';
import { reservedHostedToolCalls } from '../../../src/billing/reservation-amount.js';
import { usageFromAnthropic, usageToAnthropic } from '../../../src/wire/anthropic/usage.js';
import { addGroundingQueries, findGeminiUsageInJson } from '../../../src/wire/gemini/usage.js';
import { findUsageInJson } from '../../../src/wire/openai/usage.js';
import { findResponsesUsageInJson, hostedToolCallsOfOutput } from '../../../src/wire/responses/usage.js';
import { billedUsage } from '../../support/billed-usage.js';

const sse = (event: string, data: unknown): Buffer => Buffer.from(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

describe('Anthropic: usage.server_tool_use', () => {
  it('counts the web searches and web fetches Anthropic ran', () => {
    const usage = usageFromAnthropic({ input_tokens: 10, output_tokens: 5, server_tool_use: { web_search_requests: 3, web_fetch_requests: 2 } });
    expect(usage?.hostedTools).toEqual({ webSearch: 3, webFetch: 2, fileSearch: 0 });
    expect(usageFromAnthropic({ input_tokens: 10, output_tokens: 5, server_tool_use: { web_search_requests: 0 } })?.hostedTools).toBeUndefined();
  });

  it('reports searches another provider ran the way Anthropic does', () => {
    const usage = { input: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, output: { total: 1, text: 1, reasoning: 0 }, hostedTools: { webSearch: 3, webFetch: 0, fileSearch: 0 } };
    expect(usageToAnthropic(usage).server_tool_use).toEqual({ web_search_requests: 3, web_fetch_requests: 0 });
  });

  it('a stream cut before message_delta is billed the server tools whose blocks streamed', async () => {
    const observer = new AnthropicStreamUsageObserver();
    observer.observe(sse('message_start', { type: 'message_start', message: { model: 'claude-sonnet-4-5', usage: { input_tokens: 100, output_tokens: 1 } } }));
    for (const [index, name] of ['web_search', 'web_search', 'web_fetch'].entries()) {
      observer.observe(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'server_tool_use', id: `srvtoolu_${index}`, name, input: {} } }));
    }
    expect(observer.usageIsFinal()).toBe(false);
    expect((await billedUsage(observer, 100))?.hostedTools).toEqual({ webSearch: 2, webFetch: 1, fileSearch: 0 });
    observer.observe(sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 40, server_tool_use: { web_search_requests: 2, web_fetch_requests: 1 } } }));
    expect(observer.reportedUsage()?.hostedTools).toEqual({ webSearch: 2, webFetch: 1, fileSearch: 0 });
  });
});

describe('OpenAI Responses: hosted tool items of the output', () => {
  const search = (action?: unknown): unknown => ({ type: 'web_search_call', status: 'completed', ...(action === undefined ? {} : { action }) });

  it('counts searches (opening a page or finding in it is no search) and file searches', () => {
    const output = [search({ type: 'search', query: 'a' }), search({ type: 'open_page', url: 'https://x' }), search({ type: 'find_in_page', pattern: 'p' }), search(), { type: 'file_search_call' }, { type: 'message' }];
    expect(hostedToolCallsOfOutput(output)).toEqual({ webSearch: 2, webFetch: 0, fileSearch: 1 });
    expect(hostedToolCallsOfOutput([{ type: 'message' }])).toBeUndefined();
  });

  it('reads them from a non-streamed body, which is parsed whole only when it holds such an item', () => {
    const body = (output: unknown[]) => Buffer.from(JSON.stringify({ id: 'resp_1', output, usage: { input_tokens: 10, output_tokens: 4, total_tokens: 14 }, user: null, metadata: {} }));
    expect(findResponsesUsageInJson(body([search({ type: 'search' }), search({ type: 'search' }), search({ type: 'search' })]))?.hostedTools).toEqual({ webSearch: 3, webFetch: 0, fileSearch: 0 });
    expect(findResponsesUsageInJson(body([{ type: 'message', content: [{ type: 'output_text', text: 'no web_search_call here' }] }]))?.hostedTools).toBeUndefined();
  });

  it('a stream is billed the searches of its completed response, and when cut the searches done', async () => {
    const observer = new ResponsesPassThroughObserver();
    for (let index = 0; index < 3; index++) {
      observer.observe(sse('response.output_item.done', { type: 'response.output_item.done', output_index: index, item: search({ type: 'search', query: `q${index}` }) }));
    }
    expect((await billedUsage(observer, 50))?.hostedTools).toEqual({ webSearch: 3, webFetch: 0, fileSearch: 0 });
    const output = [search({ type: 'search' }), search({ type: 'search' }), search({ type: 'search' })];
    observer.observe(sse('response.completed', { type: 'response.completed', response: { output, usage: { input_tokens: 50, output_tokens: 9, total_tokens: 59 } } }));
    expect(observer.usageIsFinal()).toBe(true);
    expect(observer.reportedUsage()).toMatchObject({ input: { total: 50 }, output: { total: 9 }, hostedTools: { webSearch: 3 } });
  });
});

describe('Gemini: Google Search grounding', () => {
  const chunk = (queries: unknown[], usage = true): Record<string, unknown> => ({
    candidates: [{ content: { parts: [{ text: 'x' }] }, groundingMetadata: { webSearchQueries: queries } }],
    ...(usage ? { usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, totalTokenCount: 13 } } : {}),
  });

  it('counts the distinct non-empty queries (Google ignores empty ones and counts unique ones)', () => {
    fc.assert(fc.property(fc.array(fc.oneof(fc.constantFrom('', ' ', 'a', 'b'), fc.string())), (queries) => {
      const seen = new Set<string>();
      addGroundingQueries(chunk(queries), seen);
      expect(seen.size).toBe(new Set(queries.filter((query) => query.trim() !== '')).size);
    }));
  });

  it('reads them from a body, a streamed array and a pass-through stream', () => {
    expect(findGeminiUsageInJson(Buffer.from(JSON.stringify(chunk(['a', '', 'b', 'c', 'a']))))?.hostedTools).toEqual({ webSearch: 3, webFetch: 0, fileSearch: 0 });
    expect(findGeminiUsageInJson(Buffer.from(JSON.stringify([chunk(['a'], false), chunk(['b'])])))?.hostedTools?.webSearch).toBe(2);
    const observer = new GeminiStreamUsageObserver();
    observer.observe(Buffer.from(`data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'x' }] } }], usageMetadata: { promptTokenCount: 10, totalTokenCount: 10 } })}\n\n`));
    observer.observe(Buffer.from(`data: ${JSON.stringify({ ...chunk(['a', '', 'b', 'c']), candidates: [{ finishReason: 'STOP', groundingMetadata: { webSearchQueries: ['a', '', 'b', 'c'] } }] })}\n\n`));
    expect(observer.reportedUsage()?.hostedTools?.webSearch).toBe(3);
  });
});

describe('OpenAI chat: search models', () => {
  const completion = (model: string, content = 'ok'): Buffer => Buffer.from(JSON.stringify({ id: 'c', model, choices: [{ message: { content } }], usage: { prompt_tokens: 5, completion_tokens: 2 } }));

  it('an answer of a search model ran one web search; any other answer none, whatever its text says', () => {
    expect(findUsageInJson(completion('gpt-4o-search-preview-2025-03-11'))?.hostedTools).toEqual({ webSearch: 1, webFetch: 0, fileSearch: 0 });
    expect(findUsageInJson(completion('gpt-5-search-api'))?.hostedTools?.webSearch).toBe(1);
    expect(findUsageInJson(completion('gpt-4o', 'see gpt-4o-search-preview'))?.hostedTools).toBeUndefined();
  });
});

describe('what a request offers, held before it is forwarded', () => {
  it('reads the caps each family gives, and holds ten calls for an uncapped tool', () => {
    expect(hostedToolOfferOfTools([{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }, { type: 'web_fetch_20250910', name: 'web_fetch' }, { name: 'x', input_schema: {} }]))
      .toEqual({ webSearch: 3, webFetch: null });
    expect(hostedToolOfferOfResponsesBody({ tools: [{ type: 'web_search' }, { type: 'file_search' }, { type: 'function', name: 'f' }], max_tool_calls: 4 })).toEqual({ webSearch: 4, fileSearch: 4 });
    expect(hostedToolOfferOfOpenAIChatBody({ model: 'claude', web_search_options: {} })).toEqual({ webSearch: null });
    expect(hostedToolOfferOfOpenAIChatBody({ model: 'gpt-4o-search-preview' })).toEqual({ webSearch: 1 });
    expect(hostedToolOfferOfOpenAIChatBody({ model: 'gpt-4o' })).toEqual({});
    expect(reservedHostedToolCalls({ webSearch: null, webFetch: 2 })).toEqual({ webSearch: 10, webFetch: 2, fileSearch: 0 });
  });
});
