import { OPENAI_MEDIA_KINDS } from '../openai/openai-media.js';
import { defineUpstream } from '../upstream-descriptor.js';
import { AzureOpenAIAdapter } from './azure-openai-adapter.js';

export const azureOpenAIUpstream = defineUpstream({
  channelTypes: ['azure-openai'],
  protocol: 'openai-chat',
  capabilities: { streaming: true, countTokens: 'local', embeddings: true, media: OPENAI_MEDIA_KINDS, passThrough: ['chat', 'embeddings', 'responses'] },
  catalog: { 'azure-openai': { provider: 'openai' } },
  createAdapter: ({ http }) => new AzureOpenAIAdapter(http),
});
