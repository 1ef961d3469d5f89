import { defineUpstream } from '../upstream-descriptor.js';
import { VertexAIAdapter } from './vertex-adapter.js';

export const vertexAIUpstream = defineUpstream({
  channelTypes: ['vertex-ai'],
  protocol: 'vertex-ai',
  capabilities: { streaming: true, countTokens: 'local', embeddings: false, media: [], passThrough: [] },
  createAdapter: ({ http, clock }) => new VertexAIAdapter(http, clock),
});
