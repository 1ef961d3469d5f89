import { defineUpstream } from '../upstream-descriptor.js';
import { VoyageAdapter } from './voyage-adapter.js';
import { voyageWire } from '../../wire/voyage/wire.js';

/** Voyage AI, for reranking. */
export const voyageUpstream = defineUpstream({
  channelTypes: ['voyage'],
  wire: voyageWire,
  capabilities: { streaming: false, countTokens: 'local', embeddings: false, rerank: true, media: [], passThrough: [] },
  form: { voyage: { credential: 'key', baseUrl: 'optional', baseUrlHint: 'Default https://api.voyageai.com/v1 (requests go to <base>/rerank).', settings: [] } },
  createAdapter: ({ http }) => new VoyageAdapter(http),
});
