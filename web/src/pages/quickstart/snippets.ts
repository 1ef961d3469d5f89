/** Copy-ready examples for the official SDKs of the three protocol families, against this gateway. */

export interface Snippet {
  id: string;
  family: string;
  sdk: string;
  install: string;
  code: string;
}

/** JSON.stringify gives a correctly escaped JavaScript string literal for any model id or URL. */
const literal = (text: string) => JSON.stringify(text);

export function snippetsFor(apiBaseUrl: string, model: string): Snippet[] {
  return [
    {
      id: 'openai',
      family: 'OpenAI (chat completions, Responses, embeddings, images, audio)',
      sdk: 'openai',
      install: 'npm install openai',
      code: `import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: ${literal(`${apiBaseUrl}/v1`)},
  apiKey: process.env.UNIGATE_API_KEY, // your key from the API keys page
});

const stream = await client.chat.completions.create({
  model: ${literal(model)},
  messages: [{ role: 'user', content: 'Hello!' }],
  stream: true,
});
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');
`,
    },
    {
      id: 'anthropic',
      family: 'Anthropic (messages)',
      sdk: '@anthropic-ai/sdk',
      install: 'npm install @anthropic-ai/sdk',
      code: `import Anthropic from '@anthropic-ai/sdk';

const client = new Anthropic({
  baseURL: ${literal(apiBaseUrl)},
  apiKey: process.env.UNIGATE_API_KEY, // your key from the API keys page
});

const message = await client.messages.create({
  model: ${literal(model)},
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Hello!' }],
});
console.log(message.content);
`,
    },
    {
      id: 'gemini',
      family: 'Gemini (generate content)',
      sdk: '@google/genai',
      install: 'npm install @google/genai',
      code: `import { GoogleGenAI } from '@google/genai';

const ai = new GoogleGenAI({
  apiKey: process.env.UNIGATE_API_KEY, // your key from the API keys page
  httpOptions: { baseUrl: ${literal(apiBaseUrl)} },
});

const response = await ai.models.generateContent({ model: ${literal(model)}, contents: 'Hello!' });
console.log(response.text);
`,
    },
  ];
}
