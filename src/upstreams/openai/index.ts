import { defineUpstream } from '../upstream-descriptor.js';
import { OpenAIAdapter, RERANK_APIS } from './openai-adapter.js';
import { OPENAI_MEDIA_KINDS } from './openai-media.js';
import { openAIWire } from '../../wire/openai/wire.js';

/** OpenAI, and any server that speaks its API without a preset (`openai-compatible`). */
export const openAIUpstream = defineUpstream({
  channelTypes: ['openai', 'openai-compatible'],
  wire: openAIWire,
  capabilities: { streaming: true, countTokens: 'local', embeddings: true, rerank: true, media: OPENAI_MEDIA_KINDS, passThrough: ['chat', 'embeddings', 'responses', 'responses-input-tokens'] },
  catalog: { openai: { provider: 'openai' } },
  form: {
    openai: { credential: 'key', baseUrl: 'optional', baseUrlHint: 'Default https://api.openai.com/v1.', settings: [] },
    'openai-compatible': {
      credential: 'key', baseUrl: 'required', baseUrlHint: "The server's /v1 URL.",
      settings: [
        { name: 'catalog_provider', label: 'Catalog provider', input: 'text', placeholder: 'groq, deepseek, mistral …', hint: "Whose bundled models and list prices '*' serves." },
        { name: 'responses_api', label: 'Serves the Responses API itself', input: 'boolean' },
        { name: 'rerank_api', label: 'Rerank API', input: 'select', options: RERANK_APIS, hint: "'jina': <base>/rerank as Jina, vLLM and Infinity take it (default); 'tei': text-embeddings-inference's own /rerank." },
        { name: 'rerank_base_url', label: 'Rerank URL', input: 'text', placeholder: 'http://tei:8080', hint: "TEI only. Default: the base URL without its trailing /v1." },
      ],
    },
  },
  createAdapter: ({ http }) => new OpenAIAdapter(http),
});
