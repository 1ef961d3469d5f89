import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { MOCK_AWS_CREDENTIALS, MOCK_BEDROCK_REGION, startMockBedrockUpstream, type MockBedrockUpstream } from '../../support/mock-bedrock-upstream.js';
import { signatureFor, startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

/**
 * A conversation begun on Gemini 3 through the gateway carries Gemini's thought signatures in blocks the gateway
 * made (`ugw1.…` on thinking blocks and reasoning items). When the user switches to another provider's model, those
 * blocks must not reach it: Anthropic refuses a thinking signature it did not issue, OpenAI reasoning state it cannot
 * decrypt. The mocks refuse them exactly so; their own signatures and reasoning must still pass untouched.
 */
let gateway: TestGateway;
let gemini: MockGeminiUpstream;
let anthropic: MockAnthropicUpstream;
let openai: MockOpenAIUpstream;
let bedrock: MockBedrockUpstream;
let account: SeededAccount;

const GEMINI_MODEL = 'gemini-3-pro-preview';
const CALL_SIGNATURE = signatureFor(`${GEMINI_MODEL}:get_weather:${JSON.stringify({ location: 'Paris' })}`);
const TOOLS: Anthropic.Tool[] = [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } }];
const RESPONSES_TOOLS: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] }, strict: false }];
const CHAT_TOOLS: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } } }];

beforeAll(async () => {
  [gemini, anthropic, openai, bedrock] = await Promise.all([startMockGeminiUpstream(), startMockAnthropicUpstream(), startMockOpenAIUpstream(), startMockBedrockUpstream()]);
  gateway = await startTestGateway();
  // No placeholder signature: Gemini 3 refuses a call of the current turn that comes back without its own.
  await addRoutedModel(gateway, { model: 'on-gemini', channel: { name: 'g', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'on-gemini': GEMINI_MODEL }, settings: { dummy_thought_signatures: false } } });
  await addRoutedModel(gateway, { model: 'on-claude', channel: { name: 'a', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { 'on-claude': 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: 'on-openai', channel: { name: 'o', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { 'on-openai': 'gpt-5' } } });
  await addRoutedModel(gateway, {
    model: 'on-bedrock',
    channel: {
      name: 'b',
      type: 'bedrock',
      base_url: bedrock.url,
      credentials: { access_key_id: MOCK_AWS_CREDENTIALS.accessKeyId, secret_access_key: MOCK_AWS_CREDENTIALS.secretAccessKey, session_token: MOCK_AWS_CREDENTIALS.sessionToken },
      settings: { region: MOCK_BEDROCK_REGION },
      models: { 'on-bedrock': 'anthropic.claude-3-7-sonnet-20250219-v1:0' },
    },
  });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([gemini?.close(), anthropic?.close(), openai?.close(), bedrock?.close()]);
});

const anthropicClient = (): Anthropic => new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
const openaiClient = (): OpenAI => new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });

function lastBodyText(requests: ReadonlyArray<{ body: unknown }>): string {
  return JSON.stringify(requests.at(-1)?.body);
}

type SentMessage = { role: string; content: string | Array<{ type: string; signature?: string; thinking?: string }> };

describe('Claude Code (Anthropic Messages) switching from Gemini 3 to another provider', () => {
  const question: Anthropic.MessageParam = { role: 'user', content: 'What is the weather in Paris?' };

  /** The first turn on Gemini: [thinking carrying the call's signature, tool_use]. */
  async function callOnGemini(client: Anthropic, thinking: Anthropic.ThinkingConfigParam | undefined): Promise<Anthropic.MessageParam[]> {
    const first = await client.messages.create({ model: 'on-gemini', max_tokens: 4000, tools: TOOLS, messages: [question], ...(thinking === undefined ? {} : { thinking }) });
    expect(first.content.map((block) => block.type)).toEqual(['thinking', 'tool_use']);
    expect((first.content[0] as Anthropic.ThinkingBlock).signature).toBe(`ugw1.n.${CALL_SIGNATURE}`);
    const toolUse = first.content[1] as Anthropic.ToolUseBlock;
    return [question, { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'Sunny, 21°C' }] }];
  }

  it.each([false, true])('the tool loop goes on on Anthropic (passed through): the gateway\'s carriers are left out, Anthropic\'s own signatures go untouched (stream %s)', async (stream) => {
    const client = anthropicClient();
    // Manual extended thinking: Anthropic wants the last assistant tool turn to open with a thinking block, and the
    // carrier was no Anthropic thinking, so thinking goes off for this request, as on the translated path.
    const thinking: Anthropic.ThinkingConfigParam = { type: 'enabled', budget_tokens: 1024 };
    const messages = await callOnGemini(client, thinking);
    const ask = (params: Anthropic.MessageCreateParamsNonStreaming): Promise<Anthropic.Message> => (stream ? client.messages.stream(params).finalMessage() : client.messages.create(params));
    const second = await ask({ model: 'on-claude', max_tokens: 4000, tools: TOOLS, thinking, messages });
    expect(second.content.at(-1)).toMatchObject({ type: 'text', text: 'Tool get_weather returned: Sunny, 21°C' });
    const sent = anthropic.requests.at(-1)?.body as { messages: SentMessage[]; thinking?: unknown };
    expect(lastBodyText(anthropic.requests)).not.toContain('ugw1.');
    expect(sent.messages[1]?.content).toEqual([expect.objectContaining({ type: 'tool_use', name: 'get_weather' })]);
    expect(sent.thinking).toBeUndefined();

    // Later turns think again on Anthropic: its own signed thinking block sits in the conversation next to the
    // gateway's carrier. The carrier goes, Anthropic's block reaches it exactly as it was issued.
    const asked: Anthropic.MessageParam[] = [...messages, { role: 'assistant', content: second.content as Anthropic.ContentBlockParam[] }, { role: 'user', content: 'And what should I wear?' }];
    const third = await ask({ model: 'on-claude', max_tokens: 4000, tools: TOOLS, thinking, messages: asked });
    expect(third.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    expect((anthropic.requests.at(-1)?.body as { thinking?: unknown }).thinking).toEqual(thinking);
    const withClaude: Anthropic.MessageParam[] = [...asked, { role: 'assistant', content: third.content as Anthropic.ContentBlockParam[] }, { role: 'user', content: 'Thanks' }];
    await ask({ model: 'on-claude', max_tokens: 4000, tools: TOOLS, thinking, messages: withClaude });
    const sentFourth = anthropic.requests.at(-1)?.body as { messages: SentMessage[]; thinking?: unknown };
    expect(lastBodyText(anthropic.requests)).not.toContain('ugw1.');
    expect(sentFourth.thinking).toEqual(thinking);
    expect(sentFourth.messages[5]?.content).toEqual(third.content);

    // count_tokens on the same conversation passes through with the same rule.
    const counted = await client.messages.countTokens({ model: 'on-claude', tools: TOOLS, thinking, messages: withClaude });
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(lastBodyText(anthropic.requests)).not.toContain('ugw1.');
  });

  it('thoughts that carried a signature are left out with it (summarized thinking, adaptive)', async () => {
    const client = anthropicClient();
    const thinking: Anthropic.ThinkingConfigParam = { type: 'adaptive', display: 'summarized' } as Anthropic.ThinkingConfigParam;
    const first = await client.messages.create({ model: 'on-gemini', max_tokens: 4000, tools: TOOLS, thinking, messages: [question] });
    expect(first.content[0]).toMatchObject({ type: 'thinking', thinking: expect.stringMatching(/^Thinking about/) as string, signature: `ugw1.n.${CALL_SIGNATURE}` });
    const toolUse = first.content[1] as Anthropic.ToolUseBlock;
    const answer = await client.messages.create({
      model: 'on-claude',
      max_tokens: 4000,
      tools: TOOLS,
      thinking,
      messages: [question, { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'Rain' }] }],
    });
    expect(answer.content.at(-1)).toEqual({ type: 'text', text: 'Tool get_weather returned: Rain' });
    const sent = anthropic.requests.at(-1)?.body as { messages: SentMessage[]; thinking?: unknown };
    expect(sent.messages[1]?.content).toEqual([expect.objectContaining({ type: 'tool_use', id: toolUse.id })]);
    // Adaptive thinking takes a tool turn without thinking: it stays on.
    expect(sent.thinking).toEqual(thinking);
  });

  it.each([
    { model: 'on-openai', requests: (): ReadonlyArray<{ body: unknown }> => openai.requests },
    { model: 'on-bedrock', requests: (): ReadonlyArray<{ body: unknown }> => bedrock.requests },
  ])('the tool loop goes on on $model (translated), no carrier reaching it', async ({ model, requests }) => {
    const client = anthropicClient();
    const thinking: Anthropic.ThinkingConfigParam = { type: 'enabled', budget_tokens: 1024 };
    const messages = await callOnGemini(client, thinking);
    const answer = await client.messages.create({ model, max_tokens: 4000, tools: TOOLS, thinking, messages });
    expect(answer.content.at(-1)).toMatchObject({ type: 'text' });
    expect(lastBodyText(requests())).not.toContain('ugw1.');
    expect(lastBodyText(requests())).not.toContain(CALL_SIGNATURE);
  });
});

describe('Codex (Responses, store: false) switching from Gemini 3 to another provider', () => {
  type Input = OpenAI.Responses.ResponseInputItem;
  const question: Input = { role: 'user', content: 'What is the weather in Paris?' };
  const params = { tools: RESPONSES_TOOLS, store: false, include: ['reasoning.encrypted_content' as const], reasoning: { effort: 'low' as const, summary: 'auto' as const } };

  /** The first turn on `model`, then the call's output: the input Codex sends next. */
  async function callOn(client: OpenAI, model: string): Promise<Input[]> {
    const first = await client.responses.create({ ...params, model, input: [question] });
    const call = first.output.find((item) => item.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    return [question, ...(first.output as Input[]), { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21°C' }];
  }

  function reasoningSent(): Array<Record<string, unknown>> {
    const body = openai.requests.at(-1)?.body as { input: Array<Record<string, unknown>> };
    return body.input.filter((item) => item.type === 'reasoning');
  }

  it.each([false, true])('the tool loop goes on on OpenAI (passed through): the gateway\'s reasoning items are left out, OpenAI\'s own go untouched (stream %s)', async (stream) => {
    const client = openaiClient();
    const input = await callOn(client, 'on-gemini');
    expect(input[1]).toMatchObject({ type: 'reasoning', encrypted_content: `ugw1.n.${CALL_SIGNATURE}` });
    const ask = async (next: Input[]): Promise<OpenAI.Responses.Response> => (stream ? client.responses.stream({ ...params, model: 'on-openai', input: next }).finalResponse() : client.responses.create({ ...params, model: 'on-openai', input: next }));
    const second = await ask(input);
    expect(second.output_text).toContain('Sunny');
    expect(lastBodyText(openai.requests)).not.toContain('ugw1.');
    expect(reasoningSent()).toEqual([]);
    const own = second.output.find((item) => item.type === 'reasoning') as OpenAI.Responses.ResponseReasoningItem;
    expect(own.encrypted_content).toMatch(/^gAAAAA/);

    const third = await ask([...input, ...(second.output as Input[]), { role: 'user', content: 'And tomorrow?' }]);
    expect(third.status).toBe('completed');
    expect(lastBodyText(openai.requests)).not.toContain('ugw1.');
    expect(reasoningSent()).toEqual([expect.objectContaining({ id: own.id, encrypted_content: own.encrypted_content })]);
  });

  it('reasoning state of another provider (Anthropic\'s, as the gateway carried it) is left out too', async () => {
    const client = openaiClient();
    const input = await callOn(client, 'on-claude');
    expect(input.find((item) => item.type === 'reasoning')).toMatchObject({ encrypted_content: expect.stringMatching(/^ugw1\.s\./) as string });
    const answer = await client.responses.create({ ...params, model: 'on-openai', input });
    expect(answer.output_text).toContain('Sunny');
    expect(reasoningSent()).toEqual([]);
  });

  it('the tool loop goes on on Anthropic (translated), no carrier reaching it', async () => {
    const client = openaiClient();
    const input = await callOn(client, 'on-gemini');
    const answer = await client.responses.create({ ...params, model: 'on-claude', input });
    expect(answer.output_text).toContain('Sunny');
    expect(lastBodyText(anthropic.requests)).not.toContain('ugw1.');
    expect(lastBodyText(anthropic.requests)).not.toContain(CALL_SIGNATURE);
  });
});

describe("Chat Completions on Gemini 3: the call's signature in extra_content.google.thought_signature", () => {
  type ToolCallWithSignature = OpenAI.Chat.ChatCompletionMessageToolCall & { extra_content?: { google?: { thought_signature?: string } } };
  const question: OpenAI.Chat.ChatCompletionMessageParam = { role: 'user', content: 'What is the weather in Paris?' };

  function callSignatureSentToGemini(): string | undefined {
    const body = gemini.requests.at(-1)?.body as { contents: Array<{ role: string; parts: Array<{ functionCall?: unknown; thoughtSignature?: string }> }> };
    return body.contents.filter((content) => content.role === 'model').flatMap((content) => content.parts).find((part) => part.functionCall !== undefined)?.thoughtSignature;
  }

  it.each([false, true])('a two-turn tool loop: the answer carries the signature on its call, and Gemini gets it back (stream %s)', async (stream) => {
    const client = openaiClient();
    const first = stream
      ? await client.chat.completions.stream({ model: 'on-gemini', tools: CHAT_TOOLS, messages: [question] }).finalChatCompletion()
      : await client.chat.completions.create({ model: 'on-gemini', tools: CHAT_TOOLS, messages: [question] });
    const message = first.choices[0]!.message;
    const call = message.tool_calls?.[0] as ToolCallWithSignature;
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(call.extra_content).toEqual({ google: { thought_signature: CALL_SIGNATURE } });
    // The client sends the assistant message back as it came, then the tool's result.
    const second = await client.chat.completions.create({
      model: 'on-gemini',
      tools: CHAT_TOOLS,
      messages: [question, message as OpenAI.Chat.ChatCompletionAssistantMessageParam, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21°C' }],
    });
    expect(callSignatureSentToGemini()).toBe(CALL_SIGNATURE);
    expect(second.choices[0]!.message.content).toMatch(/^Tool results: get_weather=/);
  });

  it('the streamed signature comes on the call\'s first delta, with its id and name', async () => {
    const response = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'on-gemini', stream: true, tools: CHAT_TOOLS, messages: [question] }),
    });
    const deltas = (await response.text()).split('\n\n').filter((event) => event.startsWith('data: {')).map((event) => JSON.parse(event.slice(6)) as OpenAI.Chat.ChatCompletionChunk);
    const calls = deltas.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []) as Array<OpenAI.Chat.ChatCompletionChunk.Choice.Delta.ToolCall & { extra_content?: unknown }>;
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' }, extra_content: { google: { thought_signature: CALL_SIGNATURE } } });
    expect(calls.slice(1).every((call) => call.extra_content === undefined)).toBe(true);
  });
});
