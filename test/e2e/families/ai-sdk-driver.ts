import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool, type LanguageModel } from 'ai';
import { PNG_BASE64, type ClientDriver } from './client-drivers.js';

export type AiSdkProvider = 'openai' | 'anthropic' | 'google';

/** The Vercel AI SDK with one of its provider packages, pointed at the gateway. */
export function aiSdkDriver(provider: AiSdkProvider, gatewayUrl: string, apiKey: string): ClientDriver {
  const model = (id: string): LanguageModel => {
    switch (provider) {
      case 'openai':
        return createOpenAI({ baseURL: `${gatewayUrl}/v1`, apiKey }).chat(id);
      case 'anthropic':
        return createAnthropic({ baseURL: `${gatewayUrl}/v1`, apiKey })(id);
      case 'google':
        return createGoogleGenerativeAI({ baseURL: `${gatewayUrl}/v1beta`, apiKey })(id);
      default: {
        const unknown: never = provider;
        throw new Error(`unknown provider ${String(unknown)}`);
      }
    }
  };
  const weather = tool({
    description: 'Current weather for a city',
    inputSchema: jsonSchema<{ location: string }>({ type: 'object', properties: { location: { type: 'string' } }, required: ['location'] }),
    execute: async () => ({ temperature_c: 18, sky: 'clear' }),
  });
  return {
    name: `ai-sdk ${provider}`,
    async plain(id, prompt) {
      return (await generateText({ model: model(id), prompt, maxRetries: 0 })).text;
    },
    async stream(id, prompt) {
      const result = streamText({ model: model(id), prompt, maxRetries: 0 });
      let deltas = 0;
      let text = '';
      for await (const delta of result.textStream) {
        deltas += 1;
        text += delta;
      }
      return { text, deltas };
    },
    async toolRoundTrip(id) {
      const result = await generateText({ model: model(id), prompt: 'What is the weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(2), maxRetries: 0 });
      const call = result.steps[0]?.toolCalls[0];
      if (call === undefined) throw new Error(`expected a tool call, got ${JSON.stringify(result.steps[0]?.content)}`);
      return { toolName: call.toolName, args: call.input as Record<string, unknown>, final: result.text };
    },
    async image(id) {
      const result = await generateText({
        model: model(id),
        maxRetries: 0,
        messages: [{ role: 'user', content: [{ type: 'image', image: Buffer.from(PNG_BASE64, 'base64'), mediaType: 'image/png' }, { type: 'text', text: 'Describe this image' }] }],
      });
      return result.text;
    },
  };
}
