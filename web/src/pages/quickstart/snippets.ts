/**
 * Copy-ready examples against this gateway: each protocol family (OpenAI, Anthropic, Gemini) in curl, Python and
 * Node with its official SDK, and the settings coding agents read. Every one takes the key from the
 * `UNIGATE_API_KEY` environment variable, so the code can be pasted as it is.
 */

export type Language = 'curl' | 'python' | 'node';

export interface FamilySnippets {
  id: 'openai' | 'anthropic' | 'gemini';
  family: string;
  /** What each language needs installed (none for curl). */
  install: Record<Language, string | null>;
  code: Record<Language, string>;
}

export interface AgentSnippet {
  id: string;
  name: string;
  where: string;
  code: string;
}

/** JSON.stringify gives a correctly escaped JavaScript (and Python) string literal for any model id or URL. */
const literal = (text: string): string => JSON.stringify(text);

/** A shell word in single quotes: safe for any text. */
export const shellWord = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** A JSON body as a single-quoted shell word. */
const shellJson = (body: unknown): string => shellWord(JSON.stringify(body));

export function familySnippets(apiBaseUrl: string, model: string): FamilySnippets[] {
  const hello = [{ role: 'user', content: 'Hello!' }];
  return [
    {
      id: 'openai',
      family: 'OpenAI (chat completions, Responses, embeddings, images, audio)',
      install: { curl: null, python: 'pip install openai', node: 'npm install openai' },
      code: {
        curl: `curl ${shellWord(`${apiBaseUrl}/v1/chat/completions`)} \\
  -H "Authorization: Bearer $UNIGATE_API_KEY" \\
  -H 'Content-Type: application/json' \\
  -d ${shellJson({ model, messages: hello })}
`,
        python: `import os
from openai import OpenAI

client = OpenAI(base_url=${literal(`${apiBaseUrl}/v1`)}, api_key=os.environ["UNIGATE_API_KEY"])

response = client.chat.completions.create(
    model=${literal(model)},
    messages=[{"role": "user", "content": "Hello!"}],
)
print(response.choices[0].message.content)
`,
        node: `import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: ${literal(`${apiBaseUrl}/v1`)},
  apiKey: process.env.UNIGATE_API_KEY,
});

const stream = await client.chat.completions.create({
  model: ${literal(model)},
  messages: [{ role: 'user', content: 'Hello!' }],
  stream: true,
});
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');
`,
      },
    },
    {
      id: 'anthropic',
      family: 'Anthropic (messages)',
      install: { curl: null, python: 'pip install anthropic', node: 'npm install @anthropic-ai/sdk' },
      code: {
        curl: `curl ${shellWord(`${apiBaseUrl}/v1/messages`)} \\
  -H "x-api-key: $UNIGATE_API_KEY" \\
  -H 'anthropic-version: 2023-06-01' \\
  -H 'Content-Type: application/json' \\
  -d ${shellJson({ model, max_tokens: 1024, messages: hello })}
`,
        python: `import os
import anthropic

client = anthropic.Anthropic(base_url=${literal(apiBaseUrl)}, api_key=os.environ["UNIGATE_API_KEY"])

message = client.messages.create(
    model=${literal(model)},
    max_tokens=1024,
    messages=[{"role": "user", "content": "Hello!"}],
)
print(message.content[0].text)
`,
        node: `import Anthropic from '@anthropic-ai/sdk';

const client = new Anthropic({
  baseURL: ${literal(apiBaseUrl)},
  apiKey: process.env.UNIGATE_API_KEY,
});

const message = await client.messages.create({
  model: ${literal(model)},
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Hello!' }],
});
console.log(message.content);
`,
      },
    },
    {
      id: 'gemini',
      family: 'Gemini (generate content)',
      install: { curl: null, python: 'pip install google-genai', node: 'npm install @google/genai' },
      code: {
        curl: `curl ${shellWord(`${apiBaseUrl}/v1beta/models/${encodeURIComponent(model)}:generateContent`)} \\
  -H "x-goog-api-key: $UNIGATE_API_KEY" \\
  -H 'Content-Type: application/json' \\
  -d ${shellJson({ contents: [{ role: 'user', parts: [{ text: 'Hello!' }] }] })}
`,
        python: `import os
from google import genai
from google.genai import types

client = genai.Client(
    api_key=os.environ["UNIGATE_API_KEY"],
    http_options=types.HttpOptions(base_url=${literal(apiBaseUrl)}),
)

response = client.models.generate_content(model=${literal(model)}, contents="Hello!")
print(response.text)
`,
        node: `import { GoogleGenAI } from '@google/genai';

const ai = new GoogleGenAI({
  apiKey: process.env.UNIGATE_API_KEY,
  httpOptions: { baseUrl: ${literal(apiBaseUrl)} },
});

const response = await ai.models.generateContent({ model: ${literal(model)}, contents: 'Hello!' });
console.log(response.text);
`,
      },
    },
  ];
}

/** TOML basic strings are JSON strings for any text a model id or URL holds. */
const toml = literal;

export function agentSnippets(apiBaseUrl: string, model: string): AgentSnippet[] {
  return [
    {
      id: 'claude-code',
      name: 'Claude Code',
      where: 'In the shell before starting `claude` (or under "env" in ~/.claude/settings.json). Claude Code speaks Anthropic\'s messages API, which the gateway serves for every model.',
      code: `export ANTHROPIC_BASE_URL=${shellWord(apiBaseUrl)}
export ANTHROPIC_AUTH_TOKEN="$UNIGATE_API_KEY"
export ANTHROPIC_MODEL=${shellWord(model)}
export ANTHROPIC_SMALL_FAST_MODEL=${shellWord(model)}
claude
`,
    },
    {
      id: 'codex',
      name: 'Codex CLI',
      where: 'In ~/.codex/config.toml; Codex reads the key from UNIGATE_API_KEY and talks the Responses API.',
      code: `model = ${toml(model)}
model_provider = "unigate"

[model_providers.unigate]
name = "unigate"
base_url = ${toml(`${apiBaseUrl}/v1`)}
env_key = "UNIGATE_API_KEY"
wire_api = "responses"
`,
    },
    {
      id: 'ide',
      name: 'Cursor and other IDEs (OpenAI-compatible)',
      where: 'In the editor\'s model settings (Cursor: Settings → Models → OpenAI API key, "Override OpenAI Base URL"; Continue, Cline, Zed and others: an OpenAI-compatible provider), then add the model by its id.',
      code: `Provider:  OpenAI-compatible
Base URL:  ${apiBaseUrl}/v1
API key:   your key (the value of UNIGATE_API_KEY)
Model:     ${model}
`,
    },
  ];
}
