import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';

let gateway: TestGateway;
let gemini: MockGeminiUpstream;
let account: SeededAccount;

const TOOLS: Anthropic.Tool[] = [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } }];

beforeAll(async () => {
  gemini = await startMockGeminiUpstream();
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'sig-gemini', channel: { name: 'g', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'sig-gemini': 'gemini-3-pro-preview' }, settings: { dummy_thought_signatures: false } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 5 });
});

afterAll(async () => {
  await gateway?.close();
  await gemini?.close();
});

type GeminiPart = { functionCall?: { name: string }; thoughtSignature?: string };

function signatureSentBack(): string | undefined {
  const body = gemini.requests.at(-1)?.body as { contents: Array<{ role: string; parts: GeminiPart[] }> };
  return body.contents.flatMap((content) => content.parts).find((part) => part.functionCall !== undefined)?.thoughtSignature;
}

describe("Gemini's thought signatures survive a round trip through the Anthropic wire", () => {
  it.each([false, true])('the signature of a function call comes back on it, not a placeholder (stream %s)', async (stream) => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
    const question: Anthropic.MessageParam = { role: 'user', content: 'What is the weather in Paris?' };
    const first = stream
      ? await client.messages.stream({ model: 'sig-gemini', max_tokens: 400, tools: TOOLS, messages: [question] }).finalMessage()
      : await client.messages.create({ model: 'sig-gemini', max_tokens: 400, tools: TOOLS, messages: [question] });
    const use = first.content.findIndex((block) => block.type === 'tool_use');
    expect(use).toBeGreaterThanOrEqual(0);
    const carrier = first.content[use + 1];
    expect(carrier?.type).toBe('thinking');
    const carried = carrier?.type === 'thinking' ? carrier.signature : '';
    expect(carried).toMatch(/^ugw1\.g\./);
    const toolUse = first.content[use] as Anthropic.ToolUseBlock;
    // Claude Code sends the assistant turn back as it came, then the tool result.
    await client.messages.create({
      model: 'sig-gemini',
      max_tokens: 400,
      tools: TOOLS,
      messages: [question, { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'Sunny, 21°C' }] }],
    });
    // The channel sends no placeholder (dummy_thought_signatures: false), and Gemini 3 refuses a call without one.
    expect(signatureSentBack()).toBe(carried.slice('ugw1.g.'.length));
    expect(signatureSentBack()).not.toBe('skip_thought_signature_validator');
  });
});
