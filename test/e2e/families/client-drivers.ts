import Anthropic from '@anthropic-ai/sdk';
import { FunctionCallingConfigMode, GoogleGenAI, type Content } from '@google/genai';
import OpenAI from 'openai';

/** A tiny 1×1 PNG for the image scenario. */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export interface ToolRoundTrip {
  toolName: string;
  args: Record<string, unknown>;
  final: string;
}

/** One official client SDK, driven the way its users drive it. */
export interface ClientDriver {
  name: string;
  plain(model: string, prompt: string): Promise<string>;
  /** Streams with the SDK's own helper; returns the assembled text and how many deltas arrived. */
  stream(model: string, prompt: string): Promise<{ text: string; deltas: number }>;
  toolRoundTrip(model: string): Promise<ToolRoundTrip>;
  image(model: string): Promise<string>;
}

const WEATHER_QUESTION = 'What is the weather in Paris?';
const WEATHER_RESULT = '{"temperature_c":18,"sky":"clear"}';

export function openAIDriver(baseURL: string, apiKey: string): ClientDriver {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [{
    type: 'function',
    function: { name: 'get_weather', description: 'Current weather for a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
  }];
  return {
    name: 'openai',
    async plain(model, prompt) {
      const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: prompt }] });
      return completion.choices[0]?.message.content ?? '';
    },
    async stream(model, prompt) {
      let deltas = 0;
      const stream = client.chat.completions.stream({ model, messages: [{ role: 'user', content: prompt }] });
      stream.on('content', () => {
        deltas += 1;
      });
      const final = await stream.finalChatCompletion();
      return { text: final.choices[0]?.message.content ?? '', deltas };
    },
    async toolRoundTrip(model) {
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: WEATHER_QUESTION }];
      const first = await client.chat.completions.stream({ model, tools, messages }).finalChatCompletion();
      const message = first.choices[0]!.message;
      const call = message.tool_calls?.[0];
      if (call?.type !== 'function') throw new Error(`expected a function call, got ${JSON.stringify(message)}`);
      messages.push(message, { role: 'tool', tool_call_id: call.id, content: WEATHER_RESULT });
      const second = await client.chat.completions.create({ model, tools, messages });
      return { toolName: call.function.name, args: JSON.parse(call.function.arguments) as Record<string, unknown>, final: second.choices[0]?.message.content ?? '' };
    },
    async image(model) {
      const completion = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe this image' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } }] }],
      });
      return completion.choices[0]?.message.content ?? '';
    },
  };
}

/** The Anthropic SDK: `auth: 'bearer'` is what SDK 1.x sends with `authToken`; `x-api-key` is Claude Code's and older SDKs'. */
export function anthropicDriver(baseURL: string, apiKey: string, auth: 'bearer' | 'x-api-key'): ClientDriver {
  const client = auth === 'bearer'
    ? new Anthropic({ baseURL, authToken: apiKey, apiKey: null, maxRetries: 0 })
    : new Anthropic({ baseURL, apiKey, maxRetries: 0, defaultHeaders: { 'anthropic-version': '2023-06-01' } });
  const tools: Anthropic.Tool[] = [{ name: 'get_weather', description: 'Current weather for a city', input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } }];
  const text = (message: Anthropic.Message): string => message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
  return {
    name: `anthropic (${auth})`,
    async plain(model, prompt) {
      return text(await client.messages.create({ model, max_tokens: 256, messages: [{ role: 'user', content: prompt }] }));
    },
    async stream(model, prompt) {
      let deltas = 0;
      const stream = client.messages.stream({ model, max_tokens: 256, messages: [{ role: 'user', content: prompt }] });
      stream.on('text', () => {
        deltas += 1;
      });
      return { text: text(await stream.finalMessage()), deltas };
    },
    async toolRoundTrip(model) {
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: WEATHER_QUESTION }];
      const first = await client.messages.stream({ model, max_tokens: 256, tools, messages }).finalMessage();
      const call = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
      if (call === undefined) throw new Error(`expected a tool_use block, got ${JSON.stringify(first.content)}`);
      messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: WEATHER_RESULT }] });
      const second = await client.messages.create({ model, max_tokens: 256, tools, messages });
      return { toolName: call.name, args: call.input as Record<string, unknown>, final: text(second) };
    },
    async image(model) {
      return text(await client.messages.create({
        model,
        max_tokens: 256,
        messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } }, { type: 'text', text: 'Describe this image' }] }],
      }));
    },
  };
}

/** The @google/genai SDK with the gateway as its base URL (its default API version, v1 since its version 3). */
export function geminiDriver(baseUrl: string, apiKey: string): ClientDriver {
  const client = new GoogleGenAI({ apiKey, httpOptions: { baseUrl } });
  const functionDeclarations = [{ name: 'get_weather', description: 'Current weather for a city', parametersJsonSchema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } }];
  return {
    name: 'gemini',
    async plain(model, prompt) {
      return (await client.models.generateContent({ model, contents: prompt })).text ?? '';
    },
    async stream(model, prompt) {
      let text = '';
      let deltas = 0;
      for await (const chunk of await client.models.generateContentStream({ model, contents: prompt })) {
        if (chunk.text !== undefined && chunk.text !== '') {
          text += chunk.text;
          deltas += 1;
        }
      }
      return { text, deltas };
    },
    async toolRoundTrip(model) {
      const contents: Content[] = [{ role: 'user', parts: [{ text: WEATHER_QUESTION }] }];
      const config = { tools: [{ functionDeclarations }], toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } } };
      const first = await client.models.generateContent({ model, contents, config });
      const call = first.functionCalls?.[0];
      const modelTurn = first.candidates?.[0]?.content;
      if (call === undefined || modelTurn === undefined) throw new Error(`expected a function call, got ${JSON.stringify(first.candidates)}`);
      contents.push(modelTurn, { role: 'user', parts: [{ functionResponse: { name: call.name ?? '', ...(call.id === undefined ? {} : { id: call.id }), response: JSON.parse(WEATHER_RESULT) as Record<string, unknown> } }] });
      const second = await client.models.generateContent({ model, contents, config });
      return { toolName: call.name ?? '', args: call.args ?? {}, final: second.text ?? '' };
    },
    async image(model) {
      const response = await client.models.generateContent({
        model,
        contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }, { text: 'Describe this image' }] }],
      });
      return response.text ?? '';
    },
  };
}
