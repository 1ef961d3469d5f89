import { OPENAI_MEDIA_KINDS } from '../openai/openai-media.js';
import { defineUpstream } from '../upstream-descriptor.js';
import { OpenAICompatiblePresetAdapter } from './preset-adapter.js';
import { OPENAI_COMPATIBLE_PRESET_TYPES } from './presets.js';
import { openAIWire } from '../../wire/openai/wire.js';

/** The OpenAI-compatible providers with a preset, one channel type each. */
export const openAICompatiblePresetsUpstream = defineUpstream({
  channelTypes: OPENAI_COMPATIBLE_PRESET_TYPES,
  wire: openAIWire,
  capabilities: { streaming: true, countTokens: 'local', embeddings: true, rerank: true, media: OPENAI_MEDIA_KINDS, passThrough: ['chat', 'embeddings'] },
  catalog: {
    mistral: { provider: 'mistral' },
    groq: { provider: 'groq' },
    deepseek: { provider: 'deepseek' },
    xai: { provider: 'x-ai' },
    openrouter: { provider: 'openrouter' },
    together: { provider: 'together' },
    fireworks: { provider: 'fireworks' },
  },
  form: {
    openrouter: {
      credential: 'key', baseUrl: 'optional',
      settings: [
        { name: 'site_url', label: 'Site URL (HTTP-Referer)', input: 'text' },
        { name: 'app_name', label: 'App name (X-Title)', input: 'text' },
      ],
    },
    ollama: { credential: 'optional-key', baseUrl: 'optional', settings: [] },
    vllm: { credential: 'optional-key', baseUrl: 'optional', settings: [] },
    lmstudio: { credential: 'optional-key', baseUrl: 'optional', settings: [] },
  },
  createAdapter: ({ http }) => new OpenAICompatiblePresetAdapter(http),
});
