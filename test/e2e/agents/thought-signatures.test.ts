import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { signatureFor, startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';

let gateway: TestGateway;
let gemini: MockGeminiUpstream;
let account: SeededAccount;

const UPSTREAM = 'gemini-3-pro-preview';
const TOOLS: Anthropic.Tool[] = [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } }];
const RESPONSES_TOOLS: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] }, strict: false }];
/** What the mock signs the call to `get_weather` for Paris with. */
const CALL_SIGNATURE = signatureFor(`${UPSTREAM}:get_weather:${JSON.stringify({ location: 'Paris' })}`);

beforeAll(async () => {
  gemini = await startMockGeminiUpstream();
  gateway = await startTestGateway();
  // No placeholder (dummy_thought_signatures: false): Gemini 3 refuses a call of the current turn without its signature.
  await addRoutedModel(gateway, { model: 'sig-gemini', channel: { name: 'g', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'sig-gemini': UPSTREAM }, settings: { dummy_thought_signatures: false } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 5 });
});

afterAll(async () => {
  await gateway?.close();
  await gemini?.close();
});

type GeminiPart = { text?: string; thought?: boolean; functionCall?: { name: string }; functionResponse?: unknown; thoughtSignature?: string };

function modelPartsSentBack(): GeminiPart[] {
  const body = gemini.requests.at(-1)?.body as { contents: Array<{ role: string; parts: GeminiPart[] }> };
  return body.contents.filter((content) => content.role === 'model').flatMap((content) => content.parts);
}

function callSignatureSentBack(): string | undefined {
  return modelPartsSentBack().find((part) => part.functionCall !== undefined)?.thoughtSignature;
}

const anthropic = (): Anthropic => new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
const openai = (): OpenAI => new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });

async function ask(client: Anthropic, stream: boolean, params: Anthropic.MessageCreateParamsNonStreaming): Promise<Anthropic.Message> {
  return stream ? client.messages.stream(params).finalMessage() : client.messages.create(params);
}

describe("Gemini's thought signatures on the Anthropic wire: carried before the block they sign, the answer last", () => {
  it.each([false, true])('a call: [thinking carrying its signature, tool_use], and the signature comes back on the call (stream %s)', async (stream) => {
    const client = anthropic();
    const question: Anthropic.MessageParam = { role: 'user', content: 'What is the weather in Paris?' };
    const first = await ask(client, stream, { model: 'sig-gemini', max_tokens: 400, tools: TOOLS, messages: [question] });
    expect(first.content.map((block) => block.type)).toEqual(['thinking', 'tool_use']);
    expect(first.content[0]).toEqual({ type: 'thinking', thinking: '', signature: `ugw1.n.${CALL_SIGNATURE}` });
    const toolUse = first.content[1] as Anthropic.ToolUseBlock;
    // Claude Code sends the assistant turn back as it came, then the tool result.
    const second = await ask(client, stream, {
      model: 'sig-gemini',
      max_tokens: 400,
      tools: TOOLS,
      messages: [question, { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'Sunny, 21°C' }] }],
    });
    expect(callSignatureSentBack()).toBe(CALL_SIGNATURE);
    // The carrier is gone on Gemini's side: the model turn is the call alone.
    expect(modelPartsSentBack()).toHaveLength(1);
    // The answer ends with its text: what print mode, the Agent SDK and IDEs show.
    expect(second.content.at(-1)).toMatchObject({ type: 'text', text: expect.stringMatching(/^Tool results: get_weather=/) as string });
  });

  it.each([false, true])('thoughts before a call take its signature: one thinking block, as Anthropic writes it (stream %s)', async (stream) => {
    const client = anthropic();
    const params = { model: 'sig-gemini', max_tokens: 4000, tools: TOOLS, thinking: { type: 'adaptive' as const, display: 'summarized' as const } };
    const question: Anthropic.MessageParam = { role: 'user', content: 'What is the weather in Paris?' };
    const message = await ask(client, stream, { ...params, messages: [question] });
    expect(message.content).toEqual([
      { type: 'thinking', thinking: expect.stringMatching(/^Thinking about/) as string, signature: `ugw1.n.${CALL_SIGNATURE}` },
      expect.objectContaining({ type: 'tool_use', name: 'get_weather' }),
    ]);
    const toolUse = message.content[1] as Anthropic.ToolUseBlock;
    await ask(client, stream, { ...params, messages: [question, { role: 'assistant', content: message.content as Anthropic.ContentBlockParam[] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'Sunny' }] }] });
    // The thoughts go back as the unsigned thought they were, the signature on the call.
    expect(modelPartsSentBack()).toEqual([
      { text: expect.stringMatching(/^Thinking about/) as string, thought: true },
      { functionCall: { id: toolUse.id, name: 'get_weather', args: { location: 'Paris' } }, thoughtSignature: CALL_SIGNATURE },
    ]);
  });

  it.each([false, true])('a text answer ends with the text, never with a thinking block (stream %s)', async (stream) => {
    const message = await ask(anthropic(), stream, { model: 'sig-gemini', max_tokens: 4000, thinking: { type: 'adaptive', display: 'summarized' }, messages: [{ role: 'user', content: 'Say hello' }] });
    expect(message.content.at(-1)).toEqual({ type: 'text', text: 'Echo: Say hello' });
    // Streamed, Gemini signs the text after it: there is no place for it before the text, so only the thoughts come.
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    const thinking = message.content[0] as Anthropic.ThinkingBlock;
    expect(thinking.signature).toBe(stream ? '' : `ugw1.n.${signatureFor(`${UPSTREAM}:Echo: Say hello`)}`);
  });

  it('a text signature carried by a non-streamed answer comes back on the text', async () => {
    const client = anthropic();
    const question: Anthropic.MessageParam = { role: 'user', content: 'Say hello' };
    const first = await client.messages.create({ model: 'sig-gemini', max_tokens: 400, messages: [question] });
    expect(first.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    await client.messages.create({ model: 'sig-gemini', max_tokens: 400, messages: [question, { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] }, { role: 'user', content: 'Again' }] });
    expect(modelPartsSentBack()).toEqual([{ text: 'Echo: Say hello', thoughtSignature: signatureFor(`${UPSTREAM}:Echo: Say hello`) }]);
  });

  it('a conversation from before, with the signature in a thinking block after the call, still reaches Gemini signed', async () => {
    const client = anthropic();
    const question: Anthropic.MessageParam = { role: 'user', content: 'What is the weather in Paris?' };
    await client.messages.create({
      model: 'sig-gemini',
      max_tokens: 400,
      tools: TOOLS,
      messages: [
        question,
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_old', name: 'get_weather', input: { location: 'Paris' } }, { type: 'thinking', thinking: '', signature: `ugw1.g.${CALL_SIGNATURE}` }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_old', content: 'Sunny' }] },
      ],
    });
    expect(callSignatureSentBack()).toBe(CALL_SIGNATURE);
  });
});

describe("Gemini's thought signatures on the Responses wire (Codex, store: false)", () => {
  type Input = OpenAI.Responses.ResponseInputItem;

  it.each([false, true])('a call: [reasoning carrying its signature, function_call], and the signature comes back on the call (stream %s)', async (stream) => {
    const client = openai();
    const question: Input = { role: 'user', content: 'What is the weather in Paris?' };
    const params = { model: 'sig-gemini', tools: RESPONSES_TOOLS, store: false, include: ['reasoning.encrypted_content' as const], reasoning: { effort: 'low' as const, summary: 'auto' as const } };
    const first = stream
      ? await client.responses.stream({ ...params, input: [question] }).finalResponse()
      : await client.responses.create({ ...params, input: [question] });
    expect(first.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    const reasoning = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: expect.stringMatching(/^Thinking about/) as string }]);
    expect(reasoning.encrypted_content).toBe(`ugw1.n.${CALL_SIGNATURE}`);
    const call = first.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    // Codex keeps the output items and sends them back with the call's output.
    const second = await client.responses.create({ ...params, input: [question, ...(first.output as Input[]), { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21°C' }] });
    expect(callSignatureSentBack()).toBe(CALL_SIGNATURE);
    expect(second.output.at(-1)).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: expect.stringMatching(/^Tool results: get_weather=/) as string }] });
  });

  it.each([false, true])('a text answer ends with its message, never with a reasoning item (stream %s)', async (stream) => {
    const client = openai();
    const params = { model: 'sig-gemini', input: 'Say hello', store: false, reasoning: { effort: 'low' as const, summary: 'auto' as const } };
    const response = stream ? await client.responses.stream(params).finalResponse() : await client.responses.create(params);
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(response.output_text).toBe('Echo: Say hello');
  });
});
