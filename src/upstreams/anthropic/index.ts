import { defineUpstream } from '../upstream-descriptor.js';
import { AnthropicAdapter } from './anthropic-adapter.js';

export const anthropicUpstream = defineUpstream({
  channelTypes: ['anthropic'],
  protocol: 'anthropic-messages',
  capabilities: { streaming: true, countTokens: 'upstream', embeddings: false, media: [], passThrough: ['chat', 'count-tokens'] },
  catalog: { anthropic: { provider: 'anthropic' } },
  createAdapter: ({ http }) => new AnthropicAdapter(http),
});
