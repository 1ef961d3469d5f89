import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import { OpenAIAdapter } from '../../../../src/upstreams/openai/openai-adapter.js';
import { AzureOpenAIAdapter } from '../../../../src/upstreams/azure-openai/azure-openai-adapter.js';
import { chatRequest, fixtureBuffer, unusedTransport } from '../../openai/openai-test-helpers.js';

const adapter = new OpenAIAdapter(unusedTransport);
const parse = (name: string) => adapter.parseChatResponse(fixtureBuffer(name), chatRequest());

describe('OpenAIAdapter.parseChatResponse', () => {
  it('reads a text completion with cached tokens', () => {
    expect(parse('openai-text.json')).toEqual({
      id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
      model: 'gpt-4o-mini-2024-07-18',
      created: 1_741_569_952,
      content: [{ type: 'text', text: 'Hello! How can I assist you today?' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: { input: { total: 1117, noCache: 93, cacheRead: 1024, cacheWrite: 0 }, output: { total: 9, text: 9, reasoning: 0 } },
      warnings: [],
    });
  });

  it('reads parallel tool calls', () => {
    const response = parse('openai-tool-calls.json');
    expect(response.content).toEqual([
      { type: 'tool-call', id: 'call_8Rcl9ecWPHrCxj0i5fYUQ4yF', name: 'get_weather', argumentsJson: '{"location":"Paris, France","unit":"celsius"}' },
      { type: 'tool-call', id: 'call_Jq3Vbh7qRsOcsM0YDJjXnVGb', name: 'get_weather', argumentsJson: '{"location":"Tokyo, Japan","unit":"celsius"}' },
    ]);
    expect(response.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_calls' });
  });

  it('reads reasoning tokens of a reasoning model and reasoning_content of compatible providers', () => {
    expect(parse('openai-reasoning-model.json').usage.output).toEqual({ total: 345, text: 25, reasoning: 320 });
    const deepseek = parse('deepseek-reasoner.json');
    expect(deepseek.content).toEqual([
      { type: 'reasoning', text: 'Compare the tenths: 1 < 8, so 9.11 < 9.8.' },
      { type: 'text', text: '9.11 is smaller than 9.8.' },
    ]);
    expect(deepseek.usage.output.reasoning).toBe(98);
  });

  it('reads a refusal as text', () => {
    expect(parse('openai-refusal.json').content).toEqual([{ type: 'text', text: "I'm sorry, I can't assist with that request." }]);
  });

  it('reads Azure answers with content-filter annotations', () => {
    const azure = new AzureOpenAIAdapter(unusedTransport);
    const response = azure.parseChatResponse(fixtureBuffer('azure-text.json'), chatRequest());
    expect(response.content).toEqual([{ type: 'text', text: 'Paris is the capital of France.' }]);
    expect(response.usage.input.total).toBe(15);
  });

  it('ends in tool-calls when a provider says stop next to tool calls, and generates missing call ids', () => {
    const body = { id: 'x', model: 'm', created: 1, choices: [{ index: 0, message: { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'f', arguments: { a: 1 } } }] }, finish_reason: 'stop' }] };
    const response = adapter.parseChatResponse(Buffer.from(JSON.stringify(body)), chatRequest());
    expect(response.finishReason).toEqual({ unified: 'tool-calls', raw: 'stop' });
    expect(response.content).toEqual([{ type: 'tool-call', id: expect.stringMatching(/^call_[0-9a-f]{24}$/) as unknown, name: 'f', argumentsJson: '{"a":1}' }]);
    expect(response.usage.input.total).toBe(0);
  });

  it('throws a retryable upstream error for bodies that are not chat completions', () => {
    for (const body of ['not json', '[]', '{"choices":[]}', '{"error":{"message":"secret https://internal","type":"server_error"}}']) {
      let caught: unknown;
      try {
        adapter.parseChatResponse(Buffer.from(body), chatRequest());
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(GatewayError);
      expect((caught as GatewayError).code).toBe('upstream_error');
      expect((caught as GatewayError).retryable).toBe(true);
      expect((caught as GatewayError).message).not.toContain('internal');
    }
  });
});
