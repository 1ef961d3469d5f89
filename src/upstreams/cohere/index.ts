import { defineUpstream } from '../upstream-descriptor.js';
import { CohereAdapter } from './cohere-adapter.js';
import { cohereWire } from '../../wire/cohere/wire.js';

/** Cohere, for reranking. */
export const cohereUpstream = defineUpstream({
  channelTypes: ['cohere'],
  wire: cohereWire,
  capabilities: { streaming: false, countTokens: 'local', embeddings: false, rerank: true, media: [], passThrough: [] },
  form: { cohere: { credential: 'key', baseUrl: 'optional', baseUrlHint: 'Default https://api.cohere.com (requests go to <base>/v2/rerank).', settings: [] } },
  createAdapter: ({ http }) => new CohereAdapter(http),
});
