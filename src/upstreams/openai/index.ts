import { defineUpstream } from '../upstream-descriptor.js';
import { OpenAIAdapter } from './openai-adapter.js';
import { OPENAI_MEDIA_KINDS } from './openai-media.js';

/** OpenAI, and any server that speaks its API without a preset (`openai-compatible`). */
export const openAIUpstream = defineUpstream({
  channelTypes: ['openai', 'openai-compatible'],
  protocol: 'openai-chat',
  capabilities: { streaming: true, countTokens: 'local', embeddings: true, media: OPENAI_MEDIA_KINDS, passThrough: ['chat', 'embeddings', 'responses', 'responses-input-tokens'] },
  catalog: { openai: { provider: 'openai' } },
  createAdapter: ({ http }) => new OpenAIAdapter(http),
});
