import { defineUpstream } from '../upstream-descriptor.js';
import { VertexAIAdapter } from './vertex-adapter.js';
import { vertexAIWire } from '../../wire/vertex-ai/wire.js';

export const vertexAIUpstream = defineUpstream({
  channelTypes: ['vertex-ai'],
  wire: vertexAIWire,
  capabilities: { streaming: true, countTokens: 'local', embeddings: false, rerank: true, media: [], passThrough: [] },
  // Google's Gemini models by default; Claude on Vertex is named per model by the operator.
  catalog: { 'vertex-ai': { provider: 'google', serves: /^gemini/ } },
  form: {
    'vertex-ai': {
      credential: 'json', credentialHint: 'The service-account key file Google Cloud downloads (JSON, "type": "service_account").',
      baseUrl: 'optional', baseUrlHint: 'Default: the location\'s aiplatform.googleapis.com endpoint.',
      upstreamModelHint: 'a Gemini model, a Claude model such as claude-sonnet-4-5@20250929, or a ranker such as semantic-ranker-default-004',
      settings: [
        { name: 'project_id', label: 'Project id', input: 'text', hint: "Default: the key file's project_id." },
        { name: 'location', label: 'Location', input: 'text', placeholder: 'global', hint: "'global' or a region such as us-east5." },
        { name: 'rerank_base_url', label: 'Ranking API URL', input: 'text', placeholder: 'https://discoveryengine.googleapis.com', hint: 'Where rerank models go. Default: the base URL if set, else Vertex AI Search\'s ranking API.' },
      ],
    },
  },
  createAdapter: ({ http, clock }) => new VertexAIAdapter(http, clock),
});
