import { describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../../src/ir/chat-request.js';
import { rememberToolsSource, toolsSourceOf } from '../../../src/wire/tools-source.js';

const TOOLS_TEXT = '[{"name":"Read","input_schema":{"type":"object"}}]';
const tools: ToolDefinition[] = Object.freeze([Object.freeze({ name: 'Read', parameters: { type: 'object' } })]) as unknown as ToolDefinition[];

function body(tools: string, model = 'm'): Buffer {
  return Buffer.from(`{"model":"${model}","tools":${tools}}`);
}

describe('rememberToolsSource on a list shared by many requests', () => {
  it('keeps telling the bytes of the latest body, whether the binding is kept or made again', () => {
    rememberToolsSource(tools, body(TOOLS_TEXT), 'anthropic-messages', 'a');
    rememberToolsSource(tools, body(TOOLS_TEXT, 'another-model'), 'anthropic-messages', 'a');
    expect(toolsSourceOf(tools)).toEqual({ bytes: Buffer.from(TOOLS_TEXT), protocol: 'anthropic-messages', scope: 'a' });
    const spaced = '[ {"name":"Read","input_schema":{"type":"object"}} ]';
    rememberToolsSource(tools, body(spaced), 'anthropic-messages', 'a');
    expect(toolsSourceOf(tools)?.bytes.toString()).toBe(spaced);
    rememberToolsSource(tools, body(spaced), 'anthropic-messages', 'b');
    expect(toolsSourceOf(tools)?.scope).toBe('b');
    rememberToolsSource(tools, body(spaced), 'openai-chat', 'b');
    expect(toolsSourceOf(tools)?.protocol).toBe('openai-chat');
  });
});
