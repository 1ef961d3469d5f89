import { defineUpstream } from '../upstream-descriptor.js';
import { JinaAdapter } from './jina-adapter.js';
import { jinaWire } from '../../wire/jina/wire.js';

/** Jina AI, for reranking. */
export const jinaUpstream = defineUpstream({
  channelTypes: ['jina'],
  wire: jinaWire,
  capabilities: { streaming: false, countTokens: 'local', embeddings: false, rerank: true, media: [], passThrough: [] },
  form: { jina: { credential: 'key', baseUrl: 'optional', baseUrlHint: 'Default https://api.jina.ai/v1 (requests go to <base>/rerank).', settings: [] } },
  createAdapter: ({ http }) => new JinaAdapter(http),
});
