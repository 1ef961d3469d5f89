import type { Channel } from '../../domain/records.js';
import { adjustMistralBody } from './mistral-quirks.js';
import { dropFields, messagesOf, reportQuirk, type OpenAICompatiblePreset, type QuirkContext, type WireBody } from './preset.js';

/** Groq rejects these OpenAI fields (HTTP 400), and `n` other than 1. */
function adjustGroqBody(body: WireBody, context: QuirkContext): void {
  dropFields(body, ['logprobs', 'top_logprobs', 'logit_bias', 'service_tier', 'store', 'metadata'], context, 'Groq does not take it.');
  if (body.n !== undefined && body.n !== 1) dropFields(body, ['n'], context, 'Groq returns one choice only.');
  for (const message of messagesOf(body)) delete message.name;
}

/** xAI's reasoning models (grok-3-mini, grok-4 and later) reject penalties and stop sequences; only grok-3-mini takes an effort. */
function adjustXaiBody(body: WireBody, context: QuirkContext): void {
  const model = context.upstreamModel.toLowerCase();
  const reasoning = /grok-3-mini|grok-4|grok-code/.test(model);
  if (!reasoning) return;
  dropFields(body, ['presence_penalty', 'frequency_penalty', 'stop'], context, `xAI's reasoning model ${context.upstreamModel} does not take it.`);
  if (!model.includes('grok-3-mini')) dropFields(body, ['reasoning_effort'], context, `${context.upstreamModel} reasons on its own and takes no effort.`);
}

/** DeepSeek answers 400 when earlier reasoning (`reasoning_content`) is sent back in the conversation. */
function adjustDeepSeekBody(body: WireBody): void {
  for (const message of messagesOf(body)) delete message.reasoning_content;
}

/** LM Studio takes `json_schema` and `text` response formats only: JSON mode becomes a schema of any object. */
function adjustLmStudioBody(body: WireBody, context: QuirkContext): void {
  const format = body.response_format as { type?: unknown } | undefined;
  if (format?.type !== 'json_object') return;
  body.response_format = { type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object' } } };
  reportQuirk(context, "JSON mode was sent to LM Studio as a JSON schema of any object (it takes no 'json_object').");
}

function setting(channel: Channel, name: string): string | null {
  const value = channel.settings[name];
  return typeof value === 'string' && value !== '' ? value : null;
}

/** OpenRouter ranks apps by `HTTP-Referer` and `X-Title` (settings `site_url`, `app_name`). */
function openRouterHeaders(channel: Channel): Record<string, string> {
  const headers: Record<string, string> = {};
  const site = setting(channel, 'site_url');
  const app = setting(channel, 'app_name');
  if (site !== null) headers['HTTP-Referer'] = site;
  if (app !== null) headers['X-Title'] = app;
  return headers;
}

/** The channel types that are an OpenAI-compatible provider with known defaults and quirks. */
export const OPENAI_COMPATIBLE_PRESETS = {
  mistral: { defaultBaseUrl: 'https://api.mistral.ai/v1', adjustChatBody: adjustMistralBody },
  groq: { defaultBaseUrl: 'https://api.groq.com/openai/v1', adjustChatBody: adjustGroqBody, adjustsWhen: /"(logprobs|top_logprobs|logit_bias|n|name|service_tier|store|metadata)"/ },
  deepseek: { defaultBaseUrl: 'https://api.deepseek.com/v1', adjustChatBody: adjustDeepSeekBody, adjustsWhen: /"reasoning_content"/ },
  xai: { defaultBaseUrl: 'https://api.x.ai/v1', adjustChatBody: adjustXaiBody, adjustsWhen: /"(presence_penalty|frequency_penalty|stop|reasoning_effort)"/ },
  openrouter: { defaultBaseUrl: 'https://openrouter.ai/api/v1', headers: openRouterHeaders },
  together: { defaultBaseUrl: 'https://api.together.xyz/v1' },
  fireworks: { defaultBaseUrl: 'https://api.fireworks.ai/inference/v1' },
  ollama: { defaultBaseUrl: 'http://127.0.0.1:11434/v1' },
  vllm: { defaultBaseUrl: 'http://127.0.0.1:8000/v1' },
  lmstudio: { defaultBaseUrl: 'http://127.0.0.1:1234/v1', adjustChatBody: adjustLmStudioBody, adjustsWhen: /"json_object"/ },
} as const satisfies Record<string, OpenAICompatiblePreset>;

/** OpenAI-compatible providers with a preset: base URL, authentication and quirks filled in by the type. */
export type OpenAICompatiblePresetType = keyof typeof OPENAI_COMPATIBLE_PRESETS;

export const OPENAI_COMPATIBLE_PRESET_TYPES = Object.keys(OPENAI_COMPATIBLE_PRESETS) as OpenAICompatiblePresetType[];
