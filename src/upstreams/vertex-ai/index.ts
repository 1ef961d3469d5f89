import { defineUpstream } from '../upstream-descriptor.js';
import { VertexAIAdapter } from './vertex-adapter.js';

export const vertexAIUpstream = defineUpstream({
  channelTypes: ['vertex-ai'],
  protocol: 'vertex-ai',
  capabilities: { streaming: true, countTokens: 'local', embeddings: false, media: [], passThrough: [] },
  // Google's Gemini models by default; Claude on Vertex is named per model by the operator.
  catalog: { 'vertex-ai': { provider: 'google', serves: /^gemini/ } },
  createAdapter: ({ http, clock }) => new VertexAIAdapter(http, clock),
});
