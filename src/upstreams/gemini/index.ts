import { defineUpstream } from '../upstream-descriptor.js';
import { GeminiAdapter } from './gemini-adapter.js';
import { geminiWire } from '../../wire/gemini/wire.js';

export { GeminiAdapter } from './gemini-adapter.js';
export { classifyGeminiError, type GeminiErrorClass } from './classify-error.js';
export { DUMMY_THOUGHT_SIGNATURE } from './build-contents.js';
export { readGeminiSettings, type GeminiChannelSettings } from './build-generate-content-body.js';
export { GEMINI_DEFAULT_API_VERSION, GEMINI_DEFAULT_BASE_URL, geminiUrl } from './gemini-endpoint.js';
export { JsonArraySplitter } from '../../wire/gemini/json-array-splitter.js';
export { readStreamChunks } from './read-stream-chunks.js';
export { THINKING_BUDGET_BY_EFFORT } from './thinking-config.js';

export const geminiUpstream = defineUpstream({
  channelTypes: ['gemini'],
  wire: geminiWire,
  capabilities: { streaming: true, countTokens: 'upstream', embeddings: true, media: ['image-generation'], passThrough: ['chat', 'count-tokens', 'embeddings'] },
  catalog: { gemini: { provider: 'google', serves: /^(gemini|gemma|imagen|veo|learnlm)/ } },
  form: {
    gemini: {
      credential: 'key', baseUrl: 'optional', baseUrlHint: 'Default https://generativelanguage.googleapis.com.',
      settings: [
        { name: 'api_version', label: 'API version', input: 'text', placeholder: 'v1beta' },
        { name: 'schema_mode', label: 'Schema mode', input: 'select', options: ['openapi', 'json-schema'] },
      ],
    },
  },
  createAdapter: ({ http }) => new GeminiAdapter(http),
});
